// RetentionPruner on a real store file: rows past their retention go and newer ones stay, every
// transaction deletes at most batch_rows rows, unfinished jobs and operations are never touched,
// max_events keeps the newest, the freed pages are given back (incremental vacuum), and the
// background thread prunes on its own and stops.
#include "service/retention/retention_pruner.h"

#include <gtest/gtest.h>

#include "service/common/clock.h"
#include "tests/db/temp_dir.h"
#include "tests/support/wait_for.h"

namespace tpuemu::service {
namespace {

constexpr int64_t kNowMs = 1'800'000'000'000;  // a fixed clock
constexpr int64_t kDayMs = 86'400'000;

std::string TimeOf(int64_t unix_ms) {
  return FormatRfc3339(WallTime(std::chrono::milliseconds(unix_ms)));
}

class RetentionPrunerTest : public ::testing::Test {
 protected:
  void Exec(const std::string& sql) {
    ASSERT_TRUE(store_->Transaction([&](db::Txn& txn) { return txn.ExecScript(sql); }).ok()) << sql;
  }
  int64_t Count(const std::string& sql) {
    return store_
        ->ReadResult<int64_t>([&](db::Txn& txn) -> Result<int64_t> {
          Result<db::Statement*> stmt = txn.Prepare(sql);
          if (!stmt.ok()) return stmt.status();
          Result<bool> row = (*stmt)->Step();
          if (!row.ok()) return row.status();
          return (*stmt)->ColumnInt64(0);
        })
        .value();
  }
  // `n` jobs named <prefix><i>, ended at `end` (NULL: still running), with 3 log lines and 2
  // steps each.
  // Each job on a node of its own: a node runs one job at a time (schema v8's index).
  void AddJobs(const std::string& prefix, int n, const std::string& end) {
    const std::string ended = end.empty() ? "NULL" : "'" + end + "'";
    const std::string state = end.empty() ? "'RUNNING'" : "'SUCCEEDED'";
    Exec("WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < " +
         std::to_string(n) +
         ") INSERT INTO jobs (name, project, zone, node_id, job_id, state, priority, labels_json, "
         "spec_json, spec_hash, create_time, end_time) SELECT '" +
         prefix + "' || x, 'p', 'z', 'n' || x, '" + prefix + "' || x, " + state +
         ", 0, '{}', '{}', 'h', 't', " + ended + " FROM i;" +
         "INSERT INTO job_logs (job, line_no, text) SELECT name, l.v, 'line' FROM jobs, "
         "(SELECT 1 AS v UNION SELECT 2 UNION SELECT 3) l WHERE name LIKE '" +
         prefix + "%';" +
         "INSERT INTO job_steps (job, step, cycles, emulated_seconds, mxu_utilization, flops, "
         "host_seconds) SELECT name, s.v, 1, 1, 1, 1, 1 FROM jobs, (SELECT 1 AS v UNION SELECT 2) "
         "s WHERE name LIKE '" +
         prefix + "%';");
  }
  void AddEvents(int n, int64_t time_ms) {
    Exec("WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < " +
         std::to_string(n) +
         ") INSERT INTO events (project, time, time_unix_ms, kind, resource, zone, state, "
         "message) SELECT 'p', 't', " +
         std::to_string(time_ms) + ", 'node', 'r', 'z', 'READY', 'a padded message " +
         std::string(200, 'x') + "' FROM i;");
  }
  void AddOperations(const std::string& prefix, int n, const std::string& end, bool done) {
    Exec("WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < " +
         std::to_string(n) +
         ") INSERT INTO operations (name, project, zone, target, verb, create_time, end_time, "
         "done) SELECT '" +
         prefix + "' || x, 'p', 'z', 't', 'create', 't', " +
         (end.empty() ? std::string("NULL") : "'" + end + "'") + ", " + (done ? "1" : "0") +
         " FROM i;");
  }
  RetentionOptions Options() {
    return {.interval_ms = 0,
            .jobs_seconds = 7 * 86400,
            .job_logs_seconds = 3 * 86400,
            .job_steps_seconds = 3 * 86400,
            .operations_seconds = 7 * 86400,
            .events_seconds = 7 * 86400,
            .max_events = 0,
            .batch_rows = 500,
            .now_ms = [] { return kNowMs; }};
  }

  db::testing::TempDir dir_;
  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(dir_.File("tpuemu.db")).value());
};

TEST_F(RetentionPrunerTest, OldRowsGoNewOnesStayInBoundedTransactions) {
  AddJobs("old-", 1200, TimeOf(kNowMs - 10 * kDayMs));
  AddJobs("mid-", 4, TimeOf(kNowMs - 5 * kDayMs));  // job kept, its logs and steps go
  AddJobs("new-", 5, TimeOf(kNowMs - 1000));
  AddJobs("run-", 3, "");
  AddEvents(1300, kNowMs - 8 * kDayMs);
  AddEvents(10, kNowMs - 1000);
  AddOperations("old-op-", 700, TimeOf(kNowMs - 8 * kDayMs), true);
  AddOperations("new-op-", 5, TimeOf(kNowMs - 1000), true);
  AddOperations("pending-op-", 3, "", false);

  RetentionPruner pruner(*store_, Options());
  Result<PruneCounts> counts = pruner.PruneOnce();
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->jobs, 1200);
  EXPECT_EQ(counts->job_log_lines, 1204 * 3);
  EXPECT_EQ(counts->job_steps, 1204 * 2);
  EXPECT_EQ(counts->events, 1300);
  EXPECT_EQ(counts->operations, 700);
  EXPECT_LE(counts->max_rows_in_a_transaction, 500);
  EXPECT_GE(counts->transactions, (1200 * 3 + 1200 * 2 + 1200 + 1300 + 700) / 500);
  std::printf("pruned %lld rows in %lld transactions (at most %lld rows each)\n",
              static_cast<long long>(counts->Total()), static_cast<long long>(counts->transactions),
              static_cast<long long>(counts->max_rows_in_a_transaction));

  EXPECT_EQ(Count("SELECT count(*) FROM jobs"), 12);
  EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE name LIKE 'old-%'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM job_logs"), (5 + 3) * 3);  // mid- lost theirs
  EXPECT_EQ(Count("SELECT count(*) FROM job_steps"), (5 + 3) * 2);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), 10);
  EXPECT_EQ(Count("SELECT count(*) FROM operations"), 8);
  EXPECT_EQ(Count("SELECT count(*) FROM operations WHERE done = 0"), 3);

  // A second pass finds nothing.
  Result<PruneCounts> again = pruner.PruneOnce();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Total(), 0);
}

TEST_F(RetentionPrunerTest, ZeroKeepsForeverAndMaxEventsKeepsTheNewest) {
  AddJobs("old-", 10, TimeOf(kNowMs - 100 * kDayMs));
  AddEvents(1000, kNowMs - 1000);
  RetentionOptions options = Options();
  options.jobs_seconds = 0;
  options.job_logs_seconds = 0;
  options.job_steps_seconds = 0;
  options.max_events = 100;
  RetentionPruner pruner(*store_, options);
  ASSERT_TRUE(pruner.PruneOnce().ok());
  EXPECT_EQ(Count("SELECT count(*) FROM jobs"), 10);
  EXPECT_EQ(Count("SELECT count(*) FROM job_logs"), 30);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), 100);
  EXPECT_EQ(Count("SELECT min(seq) FROM events"), 901);
}

TEST_F(RetentionPrunerTest, FreedPagesAreGivenBack) {
  EXPECT_EQ(Count("PRAGMA auto_vacuum"), 2);  // INCREMENTAL, schema v5
  AddEvents(20000, kNowMs - 8 * kDayMs);
  const int64_t full = Count("PRAGMA page_count");
  RetentionPruner pruner(*store_, Options());
  ASSERT_TRUE(pruner.PruneOnce().ok());
  EXPECT_EQ(Count("PRAGMA freelist_count"), 0);
  const int64_t after = Count("PRAGMA page_count");
  std::printf("page_count %lld with 20,000 events, %lld once pruned\n",
              static_cast<long long>(full), static_cast<long long>(after));
  EXPECT_LT(after * 4, full);
}

TEST_F(RetentionPrunerTest, TheBackgroundThreadPrunesAndStops) {
  AddEvents(50, kNowMs - 8 * kDayMs);
  RetentionOptions options = Options();
  options.interval_ms = 10;
  RetentionPruner pruner(*store_, options);
  pruner.Start();
  EXPECT_TRUE(testing::WaitFor([&] { return Count("SELECT count(*) FROM events") == 0; }));
  pruner.Stop();
  pruner.Stop();  // idempotent
}

}  // namespace
}  // namespace tpuemu::service
