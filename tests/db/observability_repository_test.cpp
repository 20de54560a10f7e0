// Schema v3 repositories: job_programs (and its trigger), events (seq, order, retention),
// utilization_samples (window, retention) and the aggregate queries of StatsRepository.
#include <gtest/gtest.h>

#include "db/event_repository.h"
#include "db/job_program_repository.h"
#include "db/job_repository.h"
#include "db/node_repository.h"
#include "db/stats_repository.h"
#include "db/utilization_repository.h"
#include "tests/db/temp_dir.h"
#include "tests/support/test_store.h"

namespace tpuemu::db {
namespace {

class ObservabilityRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Store>> store =
        Store::Open(::tpuemu::testing::TestStoreLocation(dir_.File("obs.db")));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  EventRow Event(const std::string& project, int64_t time_ms, const std::string& state) {
    EventRow e;
    e.project = project;
    e.time = "2026-01-01T00:00:00Z";
    e.time_unix_ms = time_ms;
    e.kind = "node";
    e.resource = "projects/" + project + "/locations/z/nodes/n";
    e.zone = "z";
    e.state = state;
    e.message = "node n " + state;
    return e;
  }
  int64_t AppendEvent(const EventRow& e) {
    int64_t seq = 0;
    EXPECT_TRUE(store_
                    ->Transaction([&](Txn& txn) -> Status {
                      Result<int64_t> s = events().Append(txn, e);
                      if (!s.ok()) return s.status();
                      seq = *s;
                      return Status::Ok();
                    })
                    .ok());
    return seq;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  EventRepository events() { return EventRepository(*store_); }
};

TEST_F(ObservabilityRepositoryTest, EventsListPerProjectInSeqOrder) {
  int64_t a1 = AppendEvent(Event("a", 1, "CREATING"));
  AppendEvent(Event("b", 2, "CREATING"));
  EventRow ready = Event("a", 3, "READY");
  ready.previous_state = "CREATING";
  int64_t a2 = AppendEvent(ready);
  EXPECT_LT(a1, a2);
  Result<std::vector<EventRow>> all = events().List("a", 0, 10);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].seq, a1);
  EXPECT_FALSE((*all)[0].previous_state.has_value());
  EXPECT_EQ((*all)[1].previous_state, "CREATING");
  ready.seq = a2;
  EXPECT_EQ((*all)[1], ready);
  Result<std::vector<EventRow>> after = events().List("a", a1, 10);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].seq, a2);
  EXPECT_EQ(events().List("a", 0, 1)->size(), 1u);
}

TEST_F(ObservabilityRepositoryTest, EventsPruneByCountAndAgeAndSeqIsNeverReused) {
  for (int i = 0; i < 10; ++i) AppendEvent(Event("p", 1000 + i, "READY"));
  ASSERT_TRUE(store_
                  ->Transaction([&](Txn& txn) -> Status {
                    Result<int64_t> removed = events().Prune(txn, 6, 1003);
                    if (!removed.ok()) return removed.status();
                    EXPECT_EQ(*removed, 4);  // the 4 oldest by count; age removes none more
                    removed = events().Prune(txn, 100, 1008);
                    EXPECT_EQ(*removed, 4);  // times 1004..1007
                    return Status::Ok();
                  })
                  .ok());
  Result<std::vector<EventRow>> left = events().List("p", 0, 100);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ(left->front().time_unix_ms, 1008);
  ASSERT_TRUE(store_->WipeAll().ok());
  EXPECT_GT(AppendEvent(Event("p", 1, "READY")), left->back().seq);
}

TEST_F(ObservabilityRepositoryTest, UtilizationWindowAndRetention) {
  UtilizationRepository samples(*store_);
  auto row = [](const std::string& node, int64_t t, double duty) {
    return UtilizationRow{node, t, duty, duty / 2, duty / 4, 100, 1000};
  };
  ASSERT_TRUE(store_
                  ->Transaction([&](Txn& txn) -> Status {
                    for (int64_t t : {100, 200, 300}) {
                      TPUEMU_RETURN_IF_ERROR(samples.Append(txn, row("n1", t, 0.5)));
                    }
                    return samples.Append(txn, row("n2", 200, 1.0));
                  })
                  .ok());
  Result<std::vector<UtilizationRow>> window = samples.List("n1", 200);
  ASSERT_TRUE(window.ok());
  ASSERT_EQ(window->size(), 2u);
  EXPECT_EQ((*window)[0], row("n1", 200, 0.5));
  EXPECT_EQ((*window)[1].time_unix_ms, 300);
  ASSERT_TRUE(store_
                  ->Transaction([&](Txn& txn) -> Status {
                    Result<int64_t> pruned = samples.PruneBefore(txn, 250);
                    EXPECT_EQ(*pruned, 3);  // n1@100, n1@200, n2@200
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(samples.List("n1", 0)->size(), 1u);
  EXPECT_TRUE(samples.List("n2", 0)->empty());
}

TEST_F(ObservabilityRepositoryTest, JobProgramFollowsItsJobAndStatsCount) {
  JobRepository jobs(*store_);
  JobProgramRepository programs(*store_);
  NodeRepository nodes(*store_);
  JobRow job;
  job.project = "p";
  job.zone = "z";
  job.node_id = "n";
  job.job_id = "j";
  job.name = "projects/p/locations/z/nodes/n/jobs/j";
  job.state = "SUCCEEDED";
  job.spec_hash = "h";
  job.create_time = "2026-01-01T00:00:00Z";
  JobProgramRow program{job.name, false, 0.25, 123456789, 2, 1 << 20, 4096, 512};
  NodeRow node{.name = "projects/p/locations/z/nodes/n",
               .project = "p",
               .zone = "z",
               .node_id = "n",
               .uid = "u",
               .state = "READY",
               .accelerator_type = "v4-8",
               .tensorcores = 8,
               .create_time = "t",
               .update_time = "t",
               .resource_json = "{}"};
  ASSERT_TRUE(store_
                  ->Transaction([&](Txn& txn) -> Status {
                    TPUEMU_RETURN_IF_ERROR(jobs.Insert(txn, job).status());
                    TPUEMU_RETURN_IF_ERROR(nodes.Insert(txn, node).status());
                    TPUEMU_RETURN_IF_ERROR(
                        jobs.AppendStep(txn, job.name, JobStepRow{0, {}, 10, 1e-6, 0.25, 1, 0}));
                    TPUEMU_RETURN_IF_ERROR(
                        jobs.AppendStep(txn, job.name, JobStepRow{1, {}, 10, 1e-6, 0.75, 1, 0}));
                    return programs.Put(txn, program);
                  })
                  .ok());
  EXPECT_EQ(*programs.Get(job.name), program);

  StatsRepository stats(*store_);
  EXPECT_DOUBLE_EQ(*stats.MeanStepMxuUtilization(job.name), 0.5);
  EXPECT_DOUBLE_EQ(*stats.MeanStepMxuUtilization("projects/p/locations/z/nodes/n/jobs/x"), 0.0);
  EXPECT_EQ(stats.CountJobsByState()->at("SUCCEEDED"), 1);
  auto by_type = *stats.CountNodesByStateAndType();
  EXPECT_EQ((by_type[{"READY", "v4-8"}]), 1);
  ASSERT_EQ(stats.ListAllNodes()->size(), 1u);
  EXPECT_EQ(stats.ListAllNodes()->front().tensorcores, 8);

  ASSERT_TRUE(store_->Transaction([&](Txn& txn) { return jobs.Delete(txn, job.name); }).ok());
  EXPECT_EQ(programs.Get(job.name).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tpuemu::db
