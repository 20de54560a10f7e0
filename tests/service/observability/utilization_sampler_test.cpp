// UtilizationSampler with an injected clock: duty cycle, TensorCore and MXU utilization weighted
// by time, HBM of the running program, retention, and the Latest() gauges.
#include "service/observability/utilization_sampler.h"

#include <gtest/gtest.h>

#include <atomic>

#include "db/node_repository.h"
#include "tests/support/wait_for.h"

namespace tpuemu::service {
namespace {

constexpr char kNode[] = "projects/p/locations/z/nodes/n";

db::JobRow Row(const std::string& id, const std::string& state) {
  db::JobRow j;
  j.project = "p";
  j.zone = "z";
  j.node_id = "n";
  j.job_id = id;
  j.name = std::string(kNode) + "/jobs/" + id;
  j.state = state;
  j.spec_hash = "h";
  j.create_time = "2026-01-01T00:00:00Z";
  return j;
}

Job JobIn(const std::string& id, JobState state) {
  return *JobFromRow(Row(id, std::string(JobStateName(state))));
}

class UtilizationSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db::NodeRow node{.name = kNode,
                     .project = "p",
                     .zone = "z",
                     .node_id = "n",
                     .uid = "1",
                     .state = "READY",
                     .accelerator_type = "v4-8",
                     .tensorcores = 8,
                     .create_time = "t",
                     .update_time = "t",
                     .resource_json = "{}"};
    db::JobRepository jobs(*store_);
    db::JobProgramRepository programs(*store_);
    ASSERT_TRUE(store_
                    ->Transaction([&](db::Txn& txn) -> Status {
                      TPUEMU_RETURN_IF_ERROR(
                          db::NodeRepository(*store_).Insert(txn, node).status());
                      for (const char* id : {"a", "b"}) {
                        TPUEMU_RETURN_IF_ERROR(jobs.Insert(txn, Row(id, "QUEUED")).status());
                        TPUEMU_RETURN_IF_ERROR(
                            programs.Put(txn, {Row(id, "").name, false, 0.1, 0, 2, 1000, 0, 0}));
                      }
                      TPUEMU_RETURN_IF_ERROR(jobs.AppendStep(
                          txn, Row("a", "").name, db::JobStepRow{0, {}, 1, 1e-6, 0.4, 1, 0}));
                      return jobs.AppendStep(txn, Row("a", "").name,
                                             db::JobStepRow{1, {}, 1, 1e-6, 0.6, 1, 0});
                    })
                    .ok());
  }
  UtilizationSampler& Sampler() {
    if (!sampler_) {
      sampler_ = std::make_unique<UtilizationSampler>(
          *store_, UtilizationOptions{.interval_ms = 0, .retention_seconds = 3, .now_ms = [this] {
                                        return now_ms_.load();
                                      }});
    }
    return *sampler_;
  }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  std::atomic<int64_t> now_ms_{0};
  std::unique_ptr<UtilizationSampler> sampler_;
};

TEST_F(UtilizationSamplerTest, DutyCycleUtilizationAndHbmWeightedByTime) {
  UtilizationSampler& sampler = Sampler();  // first interval starts at t=0
  now_ms_ = 1000;
  sampler.OnJobStateChanged(JobIn("a", JobState::kRunning), JobState::kQueued);
  now_ms_ = 2000;
  sampler.OnJobStateChanged(JobIn("a", JobState::kSucceeded), JobState::kRunning);
  now_ms_ = 4000;
  ASSERT_TRUE(sampler.SampleNow().ok());

  // Job a ran 1 s of 4 s on 2 of the v4-8's 8 TensorCores, mean step MXU utilization 0.5.
  Result<std::vector<db::UtilizationRow>> rows = sampler.History(kNode, 3600);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const db::UtilizationRow& first = (*rows)[0];
  EXPECT_EQ(first.time_unix_ms, 4000);
  EXPECT_DOUBLE_EQ(first.duty_cycle, 0.25);
  EXPECT_DOUBLE_EQ(first.tensorcore_utilization, 0.25 * 2 / 8);
  EXPECT_DOUBLE_EQ(first.mxu_utilization, 0.25 * 2 / 8 * 0.5);
  EXPECT_EQ(first.hbm_used_bytes, 0);                       // idle at sample time
  EXPECT_EQ(first.hbm_total_bytes, int64_t{4} * 32 << 30);  // 4 chips x 32 GiB

  // Job b runs from t=5 s and is still running at t=6 s: half the interval, HBM in use.
  now_ms_ = 5000;
  sampler.OnJobStateChanged(JobIn("b", JobState::kRunning), JobState::kQueued);
  now_ms_ = 6000;
  ASSERT_TRUE(sampler.SampleNow().ok());
  std::vector<NodeUtilization> latest = sampler.Latest();
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].accelerator_type, "v4-8");
  EXPECT_DOUBLE_EQ(latest[0].sample.duty_cycle, 0.5);
  EXPECT_DOUBLE_EQ(latest[0].sample.mxu_utilization, 0);  // b has no steps yet
  EXPECT_EQ(latest[0].sample.hbm_used_bytes, 2000);       // 1000 per TensorCore x 2

  // Still running for the whole next interval.
  now_ms_ = 8000;
  ASSERT_TRUE(sampler.SampleNow().ok());
  EXPECT_DOUBLE_EQ(sampler.Latest()[0].sample.duty_cycle, 1.0);

  // Retention 3 s at t=8 s drops the t=4 s sample; the window selects among the rest.
  rows = sampler.History(kNode, 3600);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].time_unix_ms, 6000);
  EXPECT_EQ(sampler.History(kNode, 1)->size(), 1u);

  sampler.Reset();
  EXPECT_TRUE(sampler.Latest().empty());
  now_ms_ = 9000;
  ASSERT_TRUE(sampler.SampleNow().ok());
  EXPECT_DOUBLE_EQ(sampler.Latest()[0].sample.duty_cycle, 0);  // activity forgotten
}

TEST_F(UtilizationSamplerTest, BackgroundThreadSamplesAndStops) {
  UtilizationSampler sampler(*store_, {.interval_ms = 1, .retention_seconds = 3600});
  sampler.Start();
  EXPECT_TRUE(testing::WaitFor([&] { return !sampler.Latest().empty(); }));
  sampler.Stop();
  EXPECT_FALSE(sampler.History(kNode, 3600)->empty());
}

}  // namespace
}  // namespace tpuemu::service
