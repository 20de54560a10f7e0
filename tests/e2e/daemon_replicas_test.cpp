// Three real tpuemud replicas on one PostgreSQL database (issue 19): creates, jobs and event
// long-polls spread over the replicas behave as one service; kill -9 of a replica mid-job loses
// no acknowledged write, its node transitions and jobs move to a live replica (a job re-runs
// with attempt + 1), and every job ends exactly once. The test reads the database itself
// (tpuemu_db) for what the API does not show: which replica owns a node or runs a job.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/store.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_server.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

const std::string kZone = "/v2/projects/p/locations/us-central2-b";
const std::string kNodes = kZone + "/nodes";
constexpr char kV4[] = R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";
// A job of about a second or two on one core: long enough to be running when a replica dies.
constexpr char kLongJob[] =
    R"({"workload": {"mlp": {"layers": 2, "batch": 64, "hidden": 128, "steps": 400}}})";
constexpr char kShortJob[] = R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}})";

class DaemonReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) GTEST_SKIP() << why;
    url_ = PostgresServer::Shared().CreateDatabase();
    for (int i = 0; i < 3; ++i) {
      replicas_.push_back(std::make_unique<DaemonProcess>());
      ASSERT_TRUE(replicas_.back()->Start(Args("r" + std::to_string(i))));
      clients_.push_back(
          std::make_unique<HttpClient>("127.0.0.1", replicas_.back()->port(), seconds(60)));
    }
    Result<std::unique_ptr<db::Store>> store = db::Store::Open(url_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  std::vector<std::string> Args(const std::string& id) const {
    return {"--port",
            "0",
            "--db",
            url_,
            "--log-level",
            "warn",
            "--replica-id",
            id,
            "--replica-heartbeat-ms",
            "200",
            "--replica-lease-ms",
            "1000",
            "--provisioning-delay-ms",
            "1500",
            "--transition-delay-ms",
            "200"};
  }
  HttpClient& On(int replica) { return *clients_[replica]; }

  // One text column of the first row of `sql` ("" for none).
  std::string Query(const std::string& sql, const std::string& param) {
    std::string out;
    Status s = store_->Read([&](db::Txn& txn) -> Status {
      Result<db::Statement*> stmt = txn.Prepare(sql);
      if (!stmt.ok()) return stmt.status();
      (*stmt)->Bind(1, param);
      Result<bool> row = (*stmt)->Step();
      if (!row.ok()) return row.status();
      if (*row) out = (*stmt)->ColumnText(0);
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  json WaitForJob(int replica, const std::string& job) {
    json j;
    EXPECT_TRUE(WaitFor(
        [&] {
          j = On(replica).Request("GET", "/v2/" + job + ":wait?timeout=10s")->Json();
          return j["state"] != "QUEUED" && j["state"] != "RUNNING";
        },
        seconds(120)))
        << j.dump();
    return j;
  }

  std::string url_;
  std::vector<std::unique_ptr<DaemonProcess>> replicas_;
  std::vector<std::unique_ptr<HttpClient>> clients_;
  std::unique_ptr<db::Store> store_;
};

TEST_F(DaemonReplicasTest, ActAsOneServiceAndSurviveTheKillOfOneMidJob) {
  // Every replica sees the others.
  json listed = On(0).Request("GET", "/_emulator/replicas")->Json();
  ASSERT_EQ(listed["replicas"].size(), 3u) << listed.dump();

  // An event long-poll on r2 wakes for a create committed through r0 (LISTEN/NOTIFY).
  const int64_t since = On(2)
                            .Request("GET", "/v2/projects/p/events?since=0&pageSize=1000")
                            ->Json()
                            .value("nextSince", int64_t{0});
  auto poll = std::async(std::launch::async, [&] {
    HttpClient c("127.0.0.1", replicas_[2]->port(), seconds(60));
    const auto start = std::chrono::steady_clock::now();
    json page =
        c.Request("GET", "/v2/projects/p/events?since=" + std::to_string(since) + "&timeout=30s")
            ->Json();
    return std::make_pair(page, std::chrono::steady_clock::now() - start);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the poll is waiting

  // Creates spread over the replicas; each read back through another replica at once.
  for (int i = 0; i < 6; ++i) {
    const std::string id = "n" + std::to_string(i);
    Result<ClientResponse> op = On(i % 3).Request("POST", kNodes + "?nodeId=" + id, kV4);
    ASSERT_EQ(op->status, 200) << op->body;
    EXPECT_EQ(On((i + 1) % 3).Request("GET", kNodes + "/" + id)->Json()["state"], "CREATING");
    EXPECT_EQ(Query("SELECT owner FROM nodes WHERE name = ?1",
                    "projects/p/locations/us-central2-b/nodes/" + id),
              "r" + std::to_string(i % 3));
  }
  auto [woken, waited] = poll.get();
  ASSERT_FALSE(woken["events"].empty()) << woken.dump();
  EXPECT_LT(waited, seconds(10));  // woken by the commit, not by its 30 s timeout
  EXPECT_EQ(woken["events"][0]["resource"], "projects/p/locations/us-central2-b/nodes/n0");

  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(WaitFor(
        [&] {
          return On((i + 2) % 3)
                     .Request("GET", kNodes + "/n" + std::to_string(i))
                     ->Json()["state"] == "READY";
        },
        seconds(30)));
  }

  // Two jobs for one node through two replicas: never both RUNNING (one job per node).
  const std::string a =
      On(0).Request("POST", kNodes + "/n0/jobs?jobId=a", kLongJob)->Json()["name"];
  const std::string b =
      On(1).Request("POST", kNodes + "/n0/jobs?jobId=b", kLongJob)->Json()["name"];
  // A job cancelled through another replica than the one that queued and runs it.
  const std::string c = On(0)
                            .Request("POST", kNodes + "/n3/jobs?jobId=c",
                                     R"({"workload": {"mlp": {"layers": 2, "batch": 64,
                                          "hidden": 128, "steps": 10000}}})")
                            ->Json()["name"];
  ASSERT_TRUE(
      WaitFor([&] { return On(2).Request("GET", "/v2/" + c)->Json()["state"] == "RUNNING"; }));
  EXPECT_EQ(On(2).Request("POST", "/v2/" + c + ":cancel", "{}")->Json()["state"], "CANCELLED");
  json cancelled = WaitForJob(0, c);
  EXPECT_EQ(cancelled["state"], "CANCELLED") << cancelled.dump();

  // Jobs on every node through every replica; r1 runs some when it dies.
  std::vector<std::string> jobs = {a, b};
  for (int i = 0; i < 6; ++i) {
    if (i == 3) continue;
    const std::string node = kNodes + "/n" + std::to_string(i);
    for (int k = 0; k < 2; ++k) {
      Result<ClientResponse> job =
          On((i + k) % 3).Request("POST", node + "/jobs", k == 0 ? kLongJob : kShortJob);
      ASSERT_EQ(job->status, 200) << job->body;
      jobs.push_back(job->Json()["name"]);
    }
  }
  // A node still CREATING, owned by r1, when r1 dies: another replica completes it.
  const std::string late_op = On(1).Request("POST", kNodes + "?nodeId=late", kV4)->Json()["name"];
  ASSERT_TRUE(WaitFor(
      [&] {
        return Query("SELECT count(*) FROM jobs WHERE owner = ?1 AND state = 'RUNNING'", "r1") !=
               "0";
      },
      seconds(30)));
  std::set<std::string> ran_on_r1;
  for (const std::string& job : jobs) {
    if (Query("SELECT owner FROM jobs WHERE name = ?1 AND state = 'RUNNING'", job) == "r1") {
      ran_on_r1.insert(job);
    }
  }
  ASSERT_FALSE(ran_on_r1.empty());
  EXPECT_EQ(replicas_[1]->Kill(SIGKILL), -SIGKILL);

  // Every job ends, the ones r1 was running after a second attempt on a live replica.
  for (const std::string& job : jobs) {
    json j = WaitForJob(job.size() % 2 == 0 ? 0 : 2, job);
    EXPECT_EQ(j["state"], "SUCCEEDED") << j.dump();
    if (ran_on_r1.count(job)) {
      EXPECT_EQ(j["attempt"], 2) << j.dump();
      const std::string owner = Query("SELECT owner FROM jobs WHERE name = ?1", job);
      EXPECT_TRUE(owner == "r0" || owner == "r2") << owner;
      // Its log names the adoption and the dead replica, not a restart (issue 26).
      const json logs = On(2).Request("GET", "/v2/" + job + "/logs")->Json();
      bool adopted = false, restarted = false;
      for (const json& line : logs["lines"]) {
        const std::string text = line.get<std::string>();
        adopted |= text.find("adopted from replica r1, which is gone") != std::string::npos;
        restarted |= text.find("after a restart") != std::string::npos;
      }
      EXPECT_TRUE(adopted && !restarted) << logs.dump();
    }
  }
  json late;
  ASSERT_TRUE(WaitFor(
      [&] {
        late = On(2).Request("GET", "/v2/" + late_op)->Json();
        return late.value("done", false);
      },
      seconds(30)));
  EXPECT_EQ(late["response"]["state"], "READY") << late.dump();
  const std::string late_owner = Query("SELECT owner FROM nodes WHERE name = ?1",
                                       "projects/p/locations/us-central2-b/nodes/late");
  EXPECT_TRUE(late_owner == "r0" || late_owner == "r2") << late_owner;

  // a and b ran one after the other on n0.
  json ja = On(2).Request("GET", "/v2/" + a)->Json(), jb = On(2).Request("GET", "/v2/" + b)->Json();
  const bool a_first = ja["startTime"].get<std::string>() < jb["startTime"].get<std::string>();
  const json& first = a_first ? ja : jb;
  const json& second = a_first ? jb : ja;
  EXPECT_LE(first["endTime"].get<std::string>(), second["startTime"].get<std::string>())
      << ja.dump() << jb.dump();

  // Exactly one terminal event per job, and the survivors list r0 and r2 only.
  std::map<std::string, int> terminal;
  int64_t next = 0;
  for (;;) {
    json page =
        On(0)
            .Request("GET", "/v2/projects/p/events?pageSize=1000&since=" + std::to_string(next))
            ->Json();
    if (page["events"].empty()) break;
    for (const json& e : page["events"]) {
      const std::string state = e.value("state", "");
      if (state == "SUCCEEDED" || state == "FAILED" || state == "CANCELLED" ||
          state == "TIMED_OUT") {
        ++terminal[e.value("resource", "")];
      }
    }
    next = page["nextSince"];
  }
  for (const std::string& job : jobs) EXPECT_EQ(terminal[job], 1) << job;
  EXPECT_EQ(terminal[c], 1);
  ASSERT_TRUE(WaitFor([&] {
    return On(2).Request("GET", "/_emulator/replicas")->Json()["replicas"].size() == 2u;
  }));
  EXPECT_EQ(replicas_[0]->Kill(SIGTERM), 0);
  EXPECT_EQ(replicas_[2]->Kill(SIGTERM), 0);
}

}  // namespace
}  // namespace tpuemu::testing
