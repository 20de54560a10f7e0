// Reads at scale: every filtered list query walks an index in seq order from its page token (no
// full SCAN of its table, no sort of the matches), and the counters the triggers keep (node and
// job counts, TensorCore sums) equal a scan of the rows after inserts, updates and deletes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "db/job_repository.h"
#include "db/list_queries.h"
#include "db/node_repository.h"
#include "db/stats_repository.h"
#include "tests/db/rows.h"

namespace tpuemu::db {
namespace {

class ListPlansTest : public ::testing::Test {
 protected:
  // The EXPLAIN QUERY PLAN lines of "SELECT *" + tail.
  std::vector<std::string> Plan(const std::string& tail) {
    std::vector<std::string> lines;
    Status s = store_->Read([&](Txn& txn) -> Status {
      Result<Statement*> stmt = txn.Prepare("EXPLAIN QUERY PLAN SELECT *" + tail);
      if (!stmt.ok()) return stmt.status();
      for (;;) {
        Result<bool> more = (*stmt)->Step();
        if (!more.ok()) return more.status();
        if (!*more) return Status::Ok();
        lines.push_back((*stmt)->ColumnText(3));
      }
    });
    EXPECT_TRUE(s.ok()) << s.ToString() << " for" << tail;
    return lines;
  }
  void ExpectIndexWalk(const std::string& tail) {
    const std::vector<std::string> plan = Plan(tail);
    ASSERT_FALSE(plan.empty()) << tail;
    for (const std::string& line : plan) {
      // The one walk of a whole index allowed: nodes_pending is partial (nodes with a transition
      // due), so it holds only the rows the query wants.
      if (line == "SCAN nodes USING INDEX nodes_pending") continue;
      EXPECT_NE(line.rfind("SCAN ", 0), 0u) << "full scan: " << line << " for" << tail;
      EXPECT_EQ(line.find("TEMP B-TREE"), std::string::npos) << line << " for" << tail;
    }
  }
  int64_t One(const std::string& sql) {
    return store_
        ->ReadResult<int64_t>([&](Txn& txn) -> Result<int64_t> {
          Result<Statement*> stmt = txn.Prepare(sql);
          if (!stmt.ok()) return stmt.status();
          Result<bool> row = (*stmt)->Step();
          if (!row.ok()) return row.status();
          return *row ? (*stmt)->ColumnInt64(0) : 0;
        })
        .value();
  }

  std::unique_ptr<Store> store_ = std::move(Store::Open(":memory:").value());
};

TEST_F(ListPlansTest, EveryFilteredListWalksAnIndexInSeqOrder) {
  for (std::string_view tail : kFilteredListQueries) ExpectIndexWalk(std::string(tail));
  // Jobs: every combination of the filters a list can set.
  for (int bits = 0; bits < 16; ++bits) {
    JobFilter filter;
    if (bits & 1) filter.project = "p";
    if (bits & 2) filter.zone = "z";
    if (bits & 4) filter.node_id = "n";
    if (bits & 8) filter.state = "QUEUED";
    if ((bits & 1) == 0 && (bits & 8) == 0) continue;  // every list names a project or a state
    ExpectIndexWalk(JobRepository::ListSql(filter));
  }
}

TEST_F(ListPlansTest, AnUnindexedFilterWouldFail) {
  // The check itself can fail: a filter on a column no index starts with is a full scan.
  const std::vector<std::string> plan = Plan(" FROM nodes WHERE uid = ?1 ORDER BY seq");
  ASSERT_FALSE(plan.empty());
  EXPECT_EQ(plan[0].rfind("SCAN nodes", 0), 0u) << plan[0];
}

// Each claim asks for its node's next queued job (JobRepository::NextQueuedOnNode): the partial
// index of queued jobs answers it, not a walk of every job the node ever ran (issue 44).
TEST_F(ListPlansTest, NextQueuedJobOnANodeReadsTheQueuedIndex) {
  const std::vector<std::string> plan = Plan(
      " FROM jobs WHERE project = ?1 AND zone = ?2 AND node_id = ?3 AND state = 'QUEUED' "
      "ORDER BY priority DESC, seq LIMIT 1");
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_NE(plan[0].find("USING INDEX jobs_queued_on_node"), std::string::npos) << plan[0];
}

TEST_F(ListPlansTest, CountersEqualAScanAfterInsertsUpdatesAndDeletes) {
  NodeRepository nodes(*store_);
  StatsRepository stats(*store_);
  ASSERT_TRUE(store_
                  ->Transaction([&](Txn& txn) -> Status {
                    for (int i = 0; i < 20; ++i) {
                      NodeRow row = testing::MakeNode(i % 2 ? "p1" : "p2", i % 3 ? "z1" : "z2",
                                                      "n" + std::to_string(i), 4 + i % 2 * 4);
                      if (i % 5 == 0) row.queued_resource = "qr";  // not the project's own
                      if (i % 7 == 0) row.zone_tensorcores = 0;    // preempted
                      TPUEMU_RETURN_IF_ERROR(nodes.Insert(txn, row).status());
                    }
                    return Status::Ok();
                  })
                  .ok());
  ASSERT_TRUE(store_
                  ->Transaction([&](Txn& txn) -> Status {
                    for (int i = 0; i < 20; i += 3) {
                      Result<NodeRow> row =
                          nodes.Get(txn, testing::MakeNode(i % 2 ? "p1" : "p2", i % 3 ? "z1" : "z2",
                                                           "n" + std::to_string(i))
                                             .name);
                      if (!row.ok()) return row.status();
                      row->state = "READY";
                      row->zone_tensorcores = 0;
                      TPUEMU_RETURN_IF_ERROR(nodes.Update(txn, *row));
                    }
                    return nodes.Delete(txn, testing::MakeNode("p1", "z1", "n1").name);
                  })
                  .ok());
  for (const char* project : {"p1", "p2"}) {
    Result<int64_t> sum = store_->ReadResult<int64_t>(
        [&](Txn& txn) { return nodes.SumStandaloneTensorCores(txn, project); });
    EXPECT_EQ(*sum, One(std::string("SELECT SUM(tensorcores) FROM nodes WHERE project = '") +
                        project + "' AND queued_resource IS NULL"));
  }
  for (const char* zone : {"z1", "z2"}) {
    Result<int64_t> sum = store_->ReadResult<int64_t>(
        [&](Txn& txn) { return nodes.SumTensorCoresInZone(txn, zone); });
    EXPECT_EQ(*sum, One(std::string("SELECT SUM(zone_tensorcores) FROM nodes WHERE zone = '") +
                        zone + "'"));
  }
  auto counts = stats.CountNodesByStateAndType();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((std::map<std::pair<std::string, std::string>, int64_t>{
                {{"CREATING", "v4-8"}, One("SELECT COUNT(*) FROM nodes WHERE state = 'CREATING'")},
                {{"READY", "v4-8"}, One("SELECT COUNT(*) FROM nodes WHERE state = 'READY'")}}),
            *counts);
  EXPECT_EQ(One("SELECT COUNT(*) FROM nodes"), 19);
  ASSERT_TRUE(store_->WipeAll().ok());
  EXPECT_TRUE(stats.CountNodesByStateAndType()->empty());
  EXPECT_EQ(One("SELECT COUNT(*) FROM node_state_counts"), 0);
}

}  // namespace
}  // namespace tpuemu::db
