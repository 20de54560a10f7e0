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
//   - effects (issue 26, "acknowledged means done"): every kind of acknowledged mutation left its
//     effect, not only a row — a node is in a state its last acknowledged change leads to (create,
//     stop, start, delete, preemption through the fault endpoint; or a change that got no answer
//     because of a kill); a patch's labels are stored; a cancelled job is in the state its cancel
//     reply said (CANCELLED, queued or running when cancelled); an acknowledged queued resource is
//     there unless deleted, an acknowledged queued-resource delete is DELETING or done. The same
//     checks run through the API after each restart, and on PostgreSQL (DaemonCrashPostgresTest: 4
//     kills, through the API only; its event seqs are in order, not dense). The clients keep their
//     nodes from one daemon's life to the next, and the last kill waits until every kind was
//     acknowledged at least once.
// The load, the ledger and the effect checks are tests/e2e/crash_load.h (bench/crash_soak runs
// them for minutes).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "db/event_repository.h"
#include "db/job_repository.h"
#include "db/node_repository.h"
#include "db/operation_repository.h"
#include "db/queued_resource_repository.h"
#include "db/store.h"
#include "tests/e2e/crash_load.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_server.h"
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
    std::vector<std::string> args = {
        "--port", "0", "--log-level", "error",
        // Short but non-zero: kills land while transitions are pending.
        "--provisioning-delay-ms", "30", "--transition-delay-ms", "30"};
    if (postgres_url_.empty()) {
      args.insert(args.end(), {"--data-dir", dir_.string()});
    } else {
      args.insert(args.end(), {"--db", postgres_url_});
    }
    return args;
  }

  bool EveryKindAcknowledged() {
    std::lock_guard lock(ledger_.mu);
    for (const char* kind : kKinds) {
      if (ledger_.acks_by_kind[kind] == 0) return false;
    }
    return true;
  }

  // `cycles` rounds of load, kill -9 and restart, with the checks after each (the store read
  // directly on SQLite; through the API after each restart on both), then a graceful stop.
  void RunKillCycles(int cycles) {
    std::vector<ClientState> states(kClients);
    for (int cycle = 0; cycle < cycles; ++cycle) {
      DaemonProcess daemon;
      ASSERT_TRUE(daemon.Start(Args())) << "cycle " << cycle;
      HttpClient checker("127.0.0.1", daemon.port(), std::chrono::seconds(10));
      if (cycle > 0) CheckRecovered(checker, cycle);
      if (HasFatalFailure()) return;

      const int acks_before = ledger_.acks, jobs_before = ledger_.job_acks,
                deletes_before = ledger_.delete_acks, cancels_before = ledger_.cancel_acks;
      std::atomic<bool> stop{false};
      std::vector<std::thread> clients;
      for (int t = 0; t < kClients; ++t) {
        clients.emplace_back(ClientLoad, daemon.port(), t, cycle, std::ref(ledger_), std::ref(stop),
                             std::ref(states[t]));
      }
      // Kill once enough writes were acknowledged, while the clients are still sending.
      EXPECT_TRUE(WaitFor(
          [&] {
            return ledger_.acks - acks_before >= kAcksPerCycle &&
                   ledger_.job_acks - jobs_before >= kJobAcksPerCycle &&
                   ledger_.delete_acks - deletes_before >= kDeleteAcksPerCycle &&
                   ledger_.cancel_acks - cancels_before >= 1 &&
                   (cycle < cycles - 1 || EveryKindAcknowledged());
          },
          std::chrono::seconds(30)))
          << "cycle " << cycle << ": only " << ledger_.acks - acks_before << " acknowledged writes";
      EXPECT_EQ(daemon.Kill(SIGKILL), -SIGKILL);
      stop = true;
      for (std::thread& t : clients) t.join();
      ExpectNoServerErrors();
      if (postgres_url_.empty()) CheckStore(cycle);
      if (HasFatalFailure()) return;
    }
    // A last restart: recovery finishes everything, and a graceful stop exits 0.
    DaemonProcess last;
    ASSERT_TRUE(last.Start(Args()));
    HttpClient checker("127.0.0.1", last.port(), std::chrono::seconds(10));
    CheckRecovered(checker, cycles);
    std::lock_guard lock(ledger_.mu);
    std::string kinds;
    for (const auto& [kind, count] : ledger_.acks_by_kind) {
      kinds += " " + kind + "=" + std::to_string(count);
    }
    std::printf(
        "acknowledged: %zu creates, %zu deletes, %zu jobs; by kind:%s; at the kills: %d pending "
        "operations, %d running jobs; %lld rows checked against their events, %lld acknowledged "
        "changes checked for their effect, %lld events with no gap in the feed\n",
        ledger_.created.size(), ledger_.deleted.size(), ledger_.jobs.size(), kinds.c_str(),
        pending_ops_at_kill_, unfinished_jobs_at_kill_, static_cast<long long>(checked_events_),
        static_cast<long long>(checked_effects_), static_cast<long long>(events_in_feed_));
    EXPECT_GE(ledger_.created.size(), static_cast<std::size_t>(cycles));
    EXPECT_FALSE(ledger_.deleted.empty());
    // Every kind of mutation was acknowledged (the last kill waits for it), so its effect was
    // checked.
    for (const char* kind : kKinds) {
      EXPECT_GT(ledger_.acks_by_kind[kind], 0) << "no acknowledged " << kind;
    }
    EXPECT_EQ(last.Kill(SIGTERM), 0);
  }

  // A 5xx during the load fails the test (the load recorded it and stopped its client).
  void ExpectNoServerErrors() {
    std::lock_guard lock(ledger_.mu);
    for (const std::string& error : ledger_.errors) ADD_FAILURE() << error;
    ledger_.errors.clear();
  }

  // CheckEffects, each missing effect a failure; returns how many changes were checked.
  int ExpectEffects(const Found& found, bool after_recovery) {
    const EffectCheck check = CheckEffects(ledger_, found, after_recovery);
    for (const Violation& v : check.violations) ADD_FAILURE() << v.message;
    return check.checked;
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
      // A queued resource's node is created by the queued resource's operation, not its own.
      EXPECT_TRUE(create_targets.count(n.name) || n.queued_resource)
          << "node without its create operation: " << n.name;
      if (n.pending_operation) {
        auto op = op_by_name.find(*n.pending_operation);
        ASSERT_NE(op, op_by_name.end()) << n.name << " points at a missing operation";
        EXPECT_FALSE(op->second.done) << n.name << " pending on a finished operation";
        EXPECT_EQ(op->second.target, n.name);
      }
    }
    for (const db::JobRow& j : *jobs) unfinished_jobs_at_kill_ += j.state == "RUNNING" ? 1 : 0;
    auto qrs = db::QueuedResourceRepository(**store).List(kProject, "-", 0, 0);
    ASSERT_TRUE(qrs.ok()) << qrs.status().ToString();
    std::map<std::string, db::QueuedResourceRow> qr_by_name;
    for (const db::QueuedResourceRow& q : *qrs) qr_by_name[q.name] = q;
    for (const db::OperationRow& op : *ops) {
      if (op.done) continue;
      ++pending_ops_at_kill_;
      if (op.target.find("/queuedResources/") != std::string::npos) {
        auto qr = qr_by_name.find(op.target);
        ASSERT_NE(qr, qr_by_name.end())
            << "unfinished operation without its queued resource: " << op.name;
        EXPECT_EQ(qr->second.pending_operation.value_or(""), op.name)
            << "unfinished operation its queued resource does not point at: " << op.name;
        continue;
      }
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
    std::unique_lock lock(ledger_.mu);
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
    // The effect of every acknowledged change, read from the store as the kill left it.
    Found found;
    for (const db::NodeRow& n : *nodes) {
      found.node_state[n.name] = n.state;
      const json stored = json::parse(n.resource_json, nullptr, false);
      found.node_round[n.name] =
          stored.is_discarded() ? "" : stored.value("/fields/labels/round"_json_pointer, "");
    }
    for (const db::JobRow& j : *jobs) found.job_state[j.name] = j.state;
    for (const db::QueuedResourceRow& q : *qrs) found.qr_state[q.name] = q.state;
    lock.unlock();
    checked_effects_ += ExpectEffects(found, /*after_recovery=*/false);
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
            const std::string state = n.value("state", "");
            if (state != "READY" && state != "STOPPED" && state != "PREEMPTED") {
              last = n.dump();
              return false;
            }
          }
          return true;
        },
        std::chrono::seconds(60));
    EXPECT_TRUE(settled) << "still unfinished after recovery: " << last;
    const Found found = ReadThroughApi(c);
    EXPECT_TRUE(found.complete) << "a list failed";
    checked_effects_ += ExpectEffects(found, /*after_recovery=*/true);
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
        // On PostgreSQL a rolled-back transaction consumes sequence values: in order, not dense.
        if (previous > 0 && postgres_url_.empty()) {
          EXPECT_EQ(seq, previous + 1) << "a gap in events?since=0";
        }
        EXPECT_GT(seq, previous) << "events?since=0 out of order";
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
  std::string postgres_url_;  // set: the daemon runs on this PostgreSQL database
  Ledger ledger_;
  int64_t checked_effects_ = 0;  // acknowledged changes checked for their effect (all checks)
  std::size_t checked_jobs_ = 0;
  int pending_ops_at_kill_ = 0;      // transitions cut by the kills (summed over kills)
  int unfinished_jobs_at_kill_ = 0;  // jobs RUNNING when killed (summed over kills)
  int64_t checked_events_ = 0;       // node and job rows checked against their events
  int64_t events_in_feed_ = 0;       // events?since=0 after the last restart
};

TEST_F(DaemonCrashTest, TwentyKillsUnderLoseNoAcknowledgedWrite) {
  RunKillCycles(kCycles);
  EXPECT_GT(checked_jobs_, 0u);
}

// The same load and checks on PostgreSQL (through the API after each restart), fewer rounds.
class DaemonCrashPostgresTest : public DaemonCrashTest {
 protected:
  void SetUp() override {
    DaemonCrashTest::SetUp();
    if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) GTEST_SKIP() << why;
    postgres_url_ = PostgresServer::Shared().CreateDatabase();
  }
};

TEST_F(DaemonCrashPostgresTest, KillsUnderLoadLoseNoAcknowledgedWrite) { RunKillCycles(4); }

}  // namespace
}  // namespace tpuemu::testing
