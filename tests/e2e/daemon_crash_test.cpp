// Durability (issue 8 item 3): the real tpuemud is killed with SIGKILL 20 times while several
// client threads create and delete nodes and submit jobs, and restarted on the same data dir each
// time. After every kill the store is read directly and checked against what the clients were
// told (a 200 is an acknowledged write), and after every restart the API is checked once recovery
// has run:
//   - every acknowledged create/delete operation and job is in the store;
//   - no node without its create operation; a pending operation's node points back at it, and a
//     not-done operation has a node to finish it on (no orphans either way);
//   - an acknowledged node is there, or gone through a finished delete operation;
//   - every job's node existed (a create operation targets it; jobs may outlive their nodes);
//   - after recovery, no node stays mid-transition and no job stays QUEUED or RUNNING;
//   - events (issue 17): every acknowledged create, delete and job has its event in the store, and
//     every node and job row's state is the state of its newest event (the event is written in
//     the transaction of the change, so no kill can keep one without the other); after the
//     restart, events?since=0 pages through them with no gap in seq.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "db/event_repository.h"
#include "db/job_repository.h"
#include "db/node_repository.h"
#include "db/operation_repository.h"
#include "db/store.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

constexpr int kCycles = 20;
constexpr int kClients = 4;
// The kill lands once this many writes were acknowledged in the cycle, jobs and deletes among them.
constexpr int kAcksPerCycle = 40;
constexpr int kJobAcksPerCycle = 4;
constexpr int kDeleteAcksPerCycle = 4;
constexpr char kProject[] = "dur";
constexpr char kParent[] = "/v2/projects/dur/locations/us-central2-b";
constexpr char kNodeBody[] = R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";
constexpr char kJobBody[] = R"({"workload":{"matmul":{"m":64,"n":64,"k":64}},"steps":2})";

// What the clients were told, shared by the client threads.
struct Ledger {
  std::mutex mu;
  std::map<std::string, std::string> created;  // node name -> create operation (acknowledged)
  std::map<std::string, std::string> deleted;  // node name -> delete operation (acknowledged)
  std::map<std::string, std::string> jobs;     // job name -> node name (acknowledged)
  std::atomic<int> acks{0};
  std::atomic<int> job_acks{0};
  std::atomic<int> delete_acks{0};
};

std::string NodeName(const std::string& id) {
  return std::string("projects/") + kProject + "/locations/us-central2-b/nodes/" + id;
}

// One client thread's load until the daemon dies (a request fails) or `stop` is set.
void ClientLoad(uint16_t port, int thread, int cycle, Ledger& ledger, std::atomic<bool>& stop) {
  HttpClient client("127.0.0.1", port, std::chrono::seconds(5));
  std::mt19937 rng(static_cast<unsigned>(thread * 1000 + cycle));
  std::vector<std::string> mine;  // node ids this thread created and has not deleted
  for (int k = 0; !stop; ++k) {
    const int action = mine.empty() ? 0 : k % 4;
    std::string method = "POST", target, body, id;
    std::size_t pick = 0;
    if (action == 0) {
      id = "n" + std::to_string(cycle) + "-" + std::to_string(thread) + "-" + std::to_string(k);
      target = std::string(kParent) + "/nodes?nodeId=" + id;
      body = kNodeBody;
    } else {
      pick = rng() % mine.size();
      id = mine[pick];
      target = std::string(kParent) + "/nodes/" + id;
      if (action <= 2) {
        target += "/jobs";
        body = kJobBody;
      } else {
        method = "DELETE";
      }
    }
    Result<ClientResponse> r = client.Request(method, target, body);
    if (!r.ok()) return;  // the daemon is gone: this request is not acknowledged
    if (r->status >= 500) {
      // Anything but 200 must be an expected refusal (node still CREATING, ...), never a 5xx.
      ADD_FAILURE() << method << " " << target << ": HTTP " << r->status << ": " << r->body;
      return;
    }
    if (r->status != 200) continue;
    const std::string name = r->Json()["name"];
    std::lock_guard lock(ledger.mu);
    if (action == 0) {
      ledger.created[NodeName(id)] = name;
      mine.push_back(id);
    } else if (action <= 2) {
      ledger.jobs[name] = NodeName(id);
      ++ledger.job_acks;
    } else {
      ledger.deleted[NodeName(id)] = name;
      ++ledger.delete_acks;
      mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    ++ledger.acks;
  }
}

// Every item of a paged list (`key` = "nodes", "jobs"), or nullopt when a page fails.
std::optional<std::vector<json>> ListAll(HttpClient& c, const std::string& path,
                                         const std::string& key) {
  std::vector<json> items;
  std::string token;
  do {
    std::string target = path + (path.find('?') == std::string::npos ? "?" : "&") + "pageSize=500" +
                         (token.empty() ? "" : "&pageToken=" + token);
    Result<ClientResponse> r = c.Request("GET", target);
    if (!r.ok() || r->status != 200) return std::nullopt;
    json page = r->Json();
    if (page.contains(key)) {
      for (const json& item : page[key]) items.push_back(item);
    }
    token = page.value("nextPageToken", "");
  } while (!token.empty());
  return items;
}

class DaemonCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tpuemu-crash-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> Args() {
    return {"--port", "0", "--data-dir", dir_.string(), "--log-level", "error",
            // Short but non-zero: kills land while transitions are pending.
            "--provisioning-delay-ms", "30", "--transition-delay-ms", "30"};
  }

  // The store, read directly while the daemon is down.
  void CheckStore(int cycle) {
    SCOPED_TRACE("after kill " + std::to_string(cycle));
    auto store = db::Store::Open((dir_ / "tpuemu.db").string());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    db::NodeRepository node_repo(**store);
    db::OperationRepository op_repo(**store);
    db::JobRepository job_repo(**store);
    auto nodes = node_repo.List(kProject, "-", 0, 0);
    auto ops = op_repo.List(kProject, "-", 0, 0);
    auto jobs = job_repo.List({.project = kProject, .zone = "-"}, 0, 0);
    ASSERT_TRUE(nodes.ok() && ops.ok() && jobs.ok());
    std::map<std::string, db::NodeRow> node_by_name;
    for (const db::NodeRow& n : *nodes) node_by_name[n.name] = n;
    std::map<std::string, db::OperationRow> op_by_name;
    std::set<std::string> create_targets;
    std::map<std::string, bool> delete_done;  // node -> some delete op of it is done
    for (const db::OperationRow& op : *ops) {
      op_by_name[op.name] = op;
      if (op.verb == "create") create_targets.insert(op.target);
      if (op.verb == "delete") delete_done[op.target] = delete_done[op.target] || op.done;
    }
    std::set<std::string> job_names;
    for (const db::JobRow& j : *jobs) job_names.insert(j.name);
    // resource -> the states of its events, oldest first.
    std::map<std::string, std::vector<std::string>> events;
    db::EventRepository event_repo(**store);
    for (int64_t after = 0;;) {
      auto page = event_repo.List(kProject, after, 1000);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      if (page->empty()) break;
      for (const db::EventRow& e : *page) events[e.resource].push_back(e.state);
      after = page->back().seq;
    }
    auto has = [&](const std::string& resource, const std::string& state) {
      const auto it = events.find(resource);
      return it != events.end() &&
             std::find(it->second.begin(), it->second.end(), state) != it->second.end();
    };
    for (const db::NodeRow& n : *nodes) {
      ASSERT_TRUE(events.count(n.name)) << "node without events: " << n.name;
      EXPECT_EQ(events[n.name].back(), n.state)
          << "node's newest event is not its state: " << n.name;
      ++checked_events_;
    }
    for (const db::JobRow& j : *jobs) {
      ASSERT_TRUE(events.count(j.name)) << "job without events: " << j.name;
      EXPECT_EQ(events[j.name].back(), j.state)
          << "job's newest event is not its state: " << j.name;
      ++checked_events_;
    }

    for (const db::NodeRow& n : *nodes) {
      EXPECT_TRUE(create_targets.count(n.name)) << "node without its create operation: " << n.name;
      if (n.pending_operation) {
        auto op = op_by_name.find(*n.pending_operation);
        ASSERT_NE(op, op_by_name.end()) << n.name << " points at a missing operation";
        EXPECT_FALSE(op->second.done) << n.name << " pending on a finished operation";
        EXPECT_EQ(op->second.target, n.name);
      }
    }
    for (const db::JobRow& j : *jobs) unfinished_jobs_at_kill_ += j.state == "RUNNING" ? 1 : 0;
    for (const db::OperationRow& op : *ops) {
      if (op.done) continue;
      ++pending_ops_at_kill_;
      auto node = node_by_name.find(op.target);
      ASSERT_NE(node, node_by_name.end()) << "unfinished operation without its node: " << op.name;
      EXPECT_EQ(node->second.pending_operation.value_or(""), op.name)
          << "unfinished operation its node does not point at: " << op.name;
    }
    for (const db::JobRow& j : *jobs) {
      const std::string node =
          "projects/" + j.project + "/locations/" + j.zone + "/nodes/" + j.node_id;
      EXPECT_TRUE(create_targets.count(node)) << "job on a node that never existed: " << j.name;
    }
    std::lock_guard lock(ledger_.mu);
    for (const auto& [node, op] : ledger_.created) {
      EXPECT_TRUE(op_by_name.count(op)) << "acknowledged create lost: " << op;
      EXPECT_TRUE(node_by_name.count(node) || delete_done[node])
          << "acknowledged node lost without a finished delete: " << node;
    }
    for (const auto& [node, op] : ledger_.created) {
      EXPECT_TRUE(has(node, "CREATING")) << "acknowledged create without its event: " << node;
    }
    for (const auto& [node, op] : ledger_.deleted) {
      EXPECT_TRUE(op_by_name.count(op)) << "acknowledged delete lost: " << op;
      EXPECT_TRUE(has(node, "DELETING")) << "acknowledged delete without its event: " << node;
    }
    for (const auto& [job, node] : ledger_.jobs) {
      EXPECT_TRUE(job_names.count(job)) << "acknowledged job lost: " << job;
      EXPECT_TRUE(has(job, "QUEUED")) << "acknowledged job without its event: " << job;
    }
    checked_jobs_ = ledger_.jobs.size();
  }

  // Through the API once recovery ran: nothing stays mid-transition, no job stays unfinished.
  void CheckRecovered(HttpClient& c, int cycle) {
    SCOPED_TRACE("after restart " + std::to_string(cycle));
    std::string last;
    bool settled = WaitFor(
        [&] {
          const std::string base = std::string("/v2/projects/") + kProject + "/locations/-/";
          for (const char* state : {"QUEUED", "RUNNING"}) {
            auto jobs = ListAll(c, base + "jobs?state=" + state, "jobs");
            if (!jobs || !jobs->empty()) {
              last = jobs ? (*jobs)[0].dump() : "job list failed";
              return false;
            }
          }
          auto nodes = ListAll(c, base + "nodes", "nodes");
          if (!nodes) return false;
          for (const json& n : *nodes) {
            if (n.value("state", "") != "READY") {
              last = n.dump();
              return false;
            }
          }
          return true;
        },
        std::chrono::seconds(60));
    EXPECT_TRUE(settled) << "still unfinished after recovery: " << last;
    // The feed a client follows: every seq from the first on, none missing.
    int64_t since = 0, previous = 0, seen = 0;
    for (;;) {
      Result<ClientResponse> r =
          c.Request("GET", std::string("/v2/projects/") + kProject +
                               "/events?since=" + std::to_string(since) + "&pageSize=1000");
      ASSERT_TRUE(r.ok() && r->status == 200);
      json page = r->Json();
      if (page["events"].empty()) break;
      for (const json& e : page["events"]) {
        const int64_t seq = e["seq"].get<int64_t>();
        if (previous > 0) {
          EXPECT_EQ(seq, previous + 1) << "a gap in events?since=0";
        }
        previous = seq;
        ++seen;
      }
      since = page["nextSince"].get<int64_t>();
    }
    EXPECT_GT(seen, 0);
    events_in_feed_ = seen;
    // Every acknowledged node still there is READY, and its create operation is done.
    std::map<std::string, std::string> created;
    {
      std::lock_guard lock(ledger_.mu);
      created = ledger_.created;
    }
    int checked = 0;
    for (const auto& [node, op] : created) {
      if (++checked > 40) break;  // a sample per cycle keeps the test short
      Result<ClientResponse> r = c.Request("GET", "/v2/" + op);
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(r->status, 200) << op;
      EXPECT_TRUE(r->Json().value("done", false)) << r->body;
    }
  }

  std::filesystem::path dir_;
  Ledger ledger_;
  std::size_t checked_jobs_ = 0;
  int pending_ops_at_kill_ = 0;      // transitions cut by the kills (summed over kills)
  int unfinished_jobs_at_kill_ = 0;  // jobs RUNNING when killed (summed over kills)
  int64_t checked_events_ = 0;       // node and job rows checked against their events
  int64_t events_in_feed_ = 0;       // events?since=0 after the last restart
};

TEST_F(DaemonCrashTest, TwentyKillsUnderLoseNoAcknowledgedWrite) {
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    DaemonProcess daemon;
    ASSERT_TRUE(daemon.Start(Args())) << "cycle " << cycle;
    HttpClient checker("127.0.0.1", daemon.port(), std::chrono::seconds(10));
    if (cycle > 0) CheckRecovered(checker, cycle);
    if (HasFatalFailure()) return;

    const int acks_before = ledger_.acks, jobs_before = ledger_.job_acks,
              deletes_before = ledger_.delete_acks;
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int t = 0; t < kClients; ++t) {
      clients.emplace_back(ClientLoad, daemon.port(), t, cycle, std::ref(ledger_), std::ref(stop));
    }
    // Kill once enough writes were acknowledged, while the clients are still sending.
    EXPECT_TRUE(WaitFor(
        [&] {
          return ledger_.acks - acks_before >= kAcksPerCycle &&
                 ledger_.job_acks - jobs_before >= kJobAcksPerCycle &&
                 ledger_.delete_acks - deletes_before >= kDeleteAcksPerCycle;
        },
        std::chrono::seconds(30)))
        << "cycle " << cycle << ": only " << ledger_.acks - acks_before << " acknowledged writes";
    EXPECT_EQ(daemon.Kill(SIGKILL), -SIGKILL);
    stop = true;
    for (std::thread& t : clients) t.join();
    CheckStore(cycle);
    if (HasFatalFailure()) return;
  }
  // A last restart: recovery finishes everything, and a graceful stop exits 0.
  DaemonProcess last;
  ASSERT_TRUE(last.Start(Args()));
  HttpClient checker("127.0.0.1", last.port(), std::chrono::seconds(10));
  CheckRecovered(checker, kCycles);
  EXPECT_GT(checked_jobs_, 0u);
  std::lock_guard lock(ledger_.mu);
  std::printf(
      "acknowledged: %zu creates, %zu deletes, %zu jobs; at the kills: %d pending "
      "operations, %d running jobs; %lld rows checked against their events, %lld events with no "
      "gap in the feed\n",
      ledger_.created.size(), ledger_.deleted.size(), ledger_.jobs.size(), pending_ops_at_kill_,
      unfinished_jobs_at_kill_, static_cast<long long>(checked_events_),
      static_cast<long long>(events_in_feed_));
  EXPECT_GE(ledger_.created.size(), static_cast<std::size_t>(kCycles));
  EXPECT_FALSE(ledger_.deleted.empty());
  EXPECT_EQ(last.Kill(SIGTERM), 0);
}

}  // namespace
}  // namespace tpuemu::testing
