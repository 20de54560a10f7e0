// Utilization history stored as changes: an idle node adds no row however many passes the
// sampler makes, and History() gives back exactly the samples one row per node per pass gave
// (Latest() after each pass, appended one row each to a second store and read back, so both went
// through the same REAL columns), across busy stretches, a deleted and a new node, and a restart
// of the sampler on the same store.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/job_program_repository.h"
#include "db/job_repository.h"
#include "db/node_repository.h"
#include "service/observability/utilization_sampler.h"
#include "tests/db/rows.h"

namespace tpuemu::service {
namespace {

std::string NodeName(const std::string& id) { return "projects/p/locations/z/nodes/" + id; }

db::JobRow JobRowFor(const std::string& node, const std::string& id, const std::string& state) {
  db::JobRow j;
  j.project = "p";
  j.zone = "z";
  j.node_id = node;
  j.job_id = id;
  j.name = NodeName(node) + "/jobs/" + id;
  j.state = state;
  j.spec_hash = "h";
  j.create_time = "2026-01-01T00:00:00Z";
  return j;
}

class UtilizationHistoryTest : public ::testing::Test {
 protected:
  void AddNode(const std::string& id) {
    ASSERT_TRUE(store_
                    ->Transaction([&](db::Txn& txn) -> Status {
                      return db::NodeRepository(*store_)
                          .Insert(txn, db::testing::MakeNode("p", "z", id))
                          .status();
                    })
                    .ok());
  }
  void DeleteNode(const std::string& id) {
    ASSERT_TRUE(store_
                    ->Transaction([&](db::Txn& txn) -> Status {
                      return db::NodeRepository(*store_).Delete(txn, NodeName(id));
                    })
                    .ok());
  }
  // A job with a 2-TensorCore program and one step at 0.5 MXU utilization.
  void AddJob(const std::string& node, const std::string& id) {
    ASSERT_TRUE(
        store_
            ->Transaction([&](db::Txn& txn) -> Status {
              db::JobRepository jobs(*store_);
              const db::JobRow row = JobRowFor(node, id, "QUEUED");
              TPUEMU_RETURN_IF_ERROR(jobs.Insert(txn, row).status());
              TPUEMU_RETURN_IF_ERROR(db::JobProgramRepository(*store_).Put(
                  txn, {row.name, false, 0.1, 0, 2, 1000, 0, 0}));
              return jobs.AppendStep(txn, row.name, db::JobStepRow{0, {}, 1, 1e-6, 0.5, 1, 0});
            })
            .ok());
  }
  void Transition(UtilizationSampler& sampler, const std::string& node, const std::string& id,
                  JobState to, JobState from) {
    sampler.OnJobStateChanged(*JobFromRow(JobRowFor(node, id, std::string(JobStateName(to)))),
                              from);
  }
  std::unique_ptr<UtilizationSampler> NewSampler() {
    return std::make_unique<UtilizationSampler>(
        *store_, UtilizationOptions{.interval_ms = 0, .retention_seconds = 86400, .now_ms = [this] {
                                      return now_ms_;
                                    }});
  }
  // Samples once (10 s later) and keeps what the sampler took, per node.
  void Pass(UtilizationSampler& sampler) {
    now_ms_ += 10000;
    ASSERT_TRUE(sampler.SampleNow().ok());
    const std::vector<NodeUtilization> latest = sampler.Latest();
    ASSERT_TRUE(one_row_each_
                    ->Transaction([&](db::Txn& txn) -> Status {
                      for (const NodeUtilization& u : latest) {
                        taken_[u.sample.node].push_back(u.sample);
                        TPUEMU_RETURN_IF_ERROR(
                            db::UtilizationRepository(*one_row_each_).Append(txn, u.sample));
                      }
                      return Status::Ok();
                    })
                    .ok());
  }
  // The node's samples of the last window_seconds as one row per pass stored them.
  std::vector<db::UtilizationRow> OneRowEach(const std::string& node, int64_t window_seconds) {
    return db::UtilizationRepository(*one_row_each_)
        .List(node, now_ms_ - window_seconds * 1000)
        .value();
  }
  int64_t Count(const std::string& table) {
    return store_
        ->ReadResult<int64_t>([&](db::Txn& txn) -> Result<int64_t> {
          Result<db::Statement*> stmt = txn.Prepare("SELECT COUNT(*) FROM " + table);
          if (!stmt.ok()) return stmt.status();
          Result<bool> row = (*stmt)->Step();
          if (!row.ok()) return row.status();
          return (*stmt)->ColumnInt64(0);
        })
        .value();
  }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  std::unique_ptr<db::Store> one_row_each_ = std::move(db::Store::Open(":memory:").value());
  int64_t now_ms_ = 1'000'000;
  std::map<std::string, std::vector<db::UtilizationRow>> taken_;
};

TEST_F(UtilizationHistoryTest, IdleNodesAddNoRowsOverManyPasses) {
  for (const char* id : {"a", "b", "c"}) AddNode(id);
  std::unique_ptr<UtilizationSampler> sampler = NewSampler();
  Pass(*sampler);
  const int64_t runs_after_first_pass = Count("utilization_runs");
  EXPECT_EQ(runs_after_first_pass, 3);  // one open run per node
  for (int i = 1; i < 300; ++i) Pass(*sampler);
  EXPECT_EQ(Count("utilization_runs"), runs_after_first_pass);  // 299 more passes: no node row
  EXPECT_EQ(Count("utilization_ticks"), 300);                   // one row per pass, all nodes

  Result<std::vector<db::UtilizationRow>> history = sampler->History(NodeName("b"), 86400);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 300u);
  EXPECT_EQ(*history, OneRowEach(NodeName("b"), 86400));
  EXPECT_EQ(*history, taken_[NodeName("b")]);  // idle: no fraction to round
  EXPECT_EQ(history->front().hbm_total_bytes, int64_t{4} * 32 << 30);
  EXPECT_EQ(history->back().duty_cycle, 0);
}

TEST_F(UtilizationHistoryTest, ReconstructedSamplesEqualTheSampledOnes) {
  for (const char* id : {"a", "b"}) AddNode(id);
  AddJob("a", "j1");
  AddJob("a", "j2");
  std::unique_ptr<UtilizationSampler> sampler = NewSampler();
  for (int i = 0; i < 5; ++i) Pass(*sampler);
  // j1 runs for 1.5 passes, then idle, then j2 runs across a restart of the sampler.
  now_ms_ += 2500;
  Transition(*sampler, "a", "j1", JobState::kRunning, JobState::kQueued);
  Pass(*sampler);
  Pass(*sampler);
  now_ms_ += 5000;
  Transition(*sampler, "a", "j1", JobState::kSucceeded, JobState::kRunning);
  Pass(*sampler);
  for (int i = 0; i < 5; ++i) Pass(*sampler);
  DeleteNode("b");
  AddNode("c");
  for (int i = 0; i < 5; ++i) Pass(*sampler);

  sampler = NewSampler();  // a restart: resumes from the open runs in the store
  Transition(*sampler, "a", "j2", JobState::kRunning, JobState::kQueued);
  for (int i = 0; i < 3; ++i) Pass(*sampler);
  Transition(*sampler, "a", "j2", JobState::kCancelled, JobState::kRunning);
  for (int i = 0; i < 5; ++i) Pass(*sampler);

  ASSERT_EQ(taken_.size(), 3u);
  for (const auto& [node, samples] : taken_) {
    Result<std::vector<db::UtilizationRow>> history = sampler->History(node, 86400);
    ASSERT_TRUE(history.ok());
    EXPECT_EQ(*history, OneRowEach(node, 86400)) << node;
    EXPECT_EQ(history->size(), samples.size()) << node;
  }
  EXPECT_EQ(taken_[NodeName("b")].size(), 13u);  // gone after the delete
  EXPECT_EQ(taken_[NodeName("c")].size(), 13u);  // from its create on
  EXPECT_GT(taken_[NodeName("a")][5].duty_cycle, 0);
  // a: idle, j1 (3 distinct samples), idle, j2 (2 distinct), idle; b, c: one run each.
  EXPECT_LT(Count("utilization_runs"), 15);
  // The window still cuts by time.
  EXPECT_EQ(*sampler->History(NodeName("a"), 25), OneRowEach(NodeName("a"), 25));
  EXPECT_EQ(sampler->History(NodeName("a"), 25)->size(), 3u);
}

}  // namespace
}  // namespace tpuemu::service
