// JobRecords: each change of a job's life is one transaction with its log line; rows convert to
// typed Jobs (an unknown stored state is INTERNAL).
#include "service/jobs/job_records.h"

#include <gtest/gtest.h>

#include "service/jobs/job_log_lines.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

Job NewJob(const std::string& id, std::optional<std::string> request_id = {},
           const std::string& hash = "h1") {
  Job job;
  job.project = "p";
  job.zone = "z";
  job.node_id = "n";
  job.job_id = id;
  job.name = job.NodeName() + "/jobs/" + id;
  job.request_id = std::move(request_id);
  job.spec_hash = hash;
  job.create_time = "2026-01-01T00:00:00.000000Z";
  return job;
}

class JobRecordsTest : public ::testing::Test {
 protected:
  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  JobRecords records_{*store_};
};

TEST_F(JobRecordsTest, InsertThenReplayTheRequestId) {
  bool inserted = false;
  Result<Job> a = records_.InsertOrReplay(NewJob("a", "r-1"), &inserted);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(inserted);
  EXPECT_GT(a->seq, 0);
  Result<Job> again = records_.InsertOrReplay(NewJob("b", "r-1"), &inserted);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(inserted);
  EXPECT_EQ(again->name, a->name);
  Result<Job> other = records_.InsertOrReplay(NewJob("c", "r-1", "h2"), &inserted);
  EXPECT_EQ(other.status().code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*records_.Logs(a->name, 0), std::vector<std::string>{"queued on " + a->NodeName()});
  EXPECT_EQ(records_.Get(NewJob("b").name).status().code(), StatusCode::kNotFound);
}

TEST_F(JobRecordsTest, RunStepsAndEndOnce) {
  bool inserted = false;
  const Job job = *records_.InsertOrReplay(NewJob("a"), &inserted);
  bool began = false;
  Result<Job> running = records_.MarkRunning(job.name, &began);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_TRUE(began);
  EXPECT_EQ(running->state, JobState::kRunning);
  EXPECT_TRUE(running->start_time.has_value());
  EXPECT_EQ(records_.MarkRunning(job.name, &began)->state, JobState::kRunning);
  EXPECT_FALSE(began);  // not QUEUED any more

  db::JobStepRow step{.step = 0, .cycles = 5, .emulated_seconds = 1e-9};
  ASSERT_TRUE(records_.RecordStep(job.name, step).ok());
  EXPECT_EQ(records_.Steps(job.name)->size(), 1u);

  std::optional<JobState> previous;
  Result<Job> done = records_.MarkTerminal(job.name, Ended(JobState::kSucceeded, "completed"),
                                           json{{"metrics", {{"steps", 1}}}}, &previous);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(previous, JobState::kRunning);
  EXPECT_EQ(done->state, JobState::kSucceeded);
  EXPECT_EQ(done->exit_code, 0);
  EXPECT_EQ(done->reason, "completed");
  EXPECT_EQ(json::parse(*done->result_json)["metrics"]["steps"], 1);
  // Already terminal: nothing changes.
  Result<Job> later =
      records_.MarkTerminal(job.name, Ended(JobState::kCancelled, "late"), json(), &previous);
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(previous.has_value());
  EXPECT_EQ(later->state, JobState::kSucceeded);
  std::vector<std::string> logs = *records_.Logs(job.name, 0);
  ASSERT_EQ(logs.size(), 4u);
  EXPECT_EQ(logs[1], "running (attempt 1)");
  EXPECT_TRUE(logs[2].starts_with("step 0 loss=n/a")) << logs[2];
  EXPECT_EQ(logs[3], "SUCCEEDED (exit code 0): completed");
  EXPECT_TRUE(records_.Delete(job.name).ok());
  EXPECT_EQ(records_.Get(job.name).status().code(), StatusCode::kNotFound);
}

TEST_F(JobRecordsTest, CompileStoresTheProfileAsTheResultSoFar) {
  bool inserted = false;
  const Job job = *records_.InsertOrReplay(NewJob("a"), &inserted);
  CompiledJob compiled;
  compiled.profile = {{"ops", json::array()}, {"hbmPeakBytesPerTensorCore", 64}};
  compiled.log_line = "compile: cache hit";
  compiled.record.job = job.name;
  compiled.record.tensorcores = 2;
  ASSERT_TRUE(records_.RecordCompile(job.name, compiled).ok());
  Job stored = *records_.Get(job.name);
  EXPECT_EQ(json::parse(*stored.result_json), (json{{"profile", compiled.profile}}));
  EXPECT_EQ(db::JobProgramRepository(*store_).Get(job.name)->tensorcores, 2);
  EXPECT_EQ(records_.Logs(job.name, 1)->front(), "compile: cache hit");
}

TEST_F(JobRecordsTest, RequeueCountsTheAttemptAndListsByState) {
  bool inserted = false, began = false;
  const Job job = *records_.InsertOrReplay(NewJob("a"), &inserted);
  Job running = *records_.MarkRunning(job.name, &began);
  EXPECT_EQ(records_.ListInState(JobState::kRunning)->size(), 1u);
  ASSERT_TRUE(records_.Requeue(running).ok());
  EXPECT_EQ(running.attempt, 2);
  Job stored = *records_.Get(job.name);
  EXPECT_EQ(stored, running);
  EXPECT_EQ(stored.state, JobState::kQueued);
  EXPECT_FALSE(stored.start_time.has_value());
  EXPECT_EQ(records_.ListInState(JobState::kQueued)->size(), 1u);
  EXPECT_TRUE(records_.ListInState(JobState::kRunning)->empty());
}

TEST_F(JobRecordsTest, AFaultRequeueKeepsMaxRetriesAndLogsTheRetry) {
  bool inserted = false, began = false, requeued = false;
  Job fresh = NewJob("r");
  fresh.max_retries = 2;
  const Job job = *records_.InsertOrReplay(fresh, &inserted);
  EXPECT_EQ(records_.Get(job.name)->max_retries, 2);  // stored (schema v5)
  Result<Job> not_running = records_.RequeueAfterFault(job.name, "fault", &requeued);
  EXPECT_FALSE(requeued);
  EXPECT_EQ(not_running->attempt, 1);
  ASSERT_TRUE(records_.MarkRunning(job.name, &began).ok());
  Result<Job> queued = records_.RequeueAfterFault(job.name, "fault", &requeued);
  ASSERT_TRUE(requeued);
  EXPECT_EQ(queued->state, JobState::kQueued);
  EXPECT_EQ(queued->attempt, 2);
  EXPECT_EQ(queued->max_retries, 2);
  EXPECT_FALSE(queued->start_time.has_value());
  EXPECT_EQ(*records_.Get(job.name), *queued);
  EXPECT_EQ(records_.Logs(job.name, 0)->back(), FaultRetryLine("fault", 2, 2));
}

TEST_F(JobRecordsTest, AnUnknownStoredStateIsInternal) {
  db::JobRow row = JobToRow(NewJob("a"));
  row.state = "PAUSED";
  ASSERT_TRUE(store_
                  ->Transaction([&](db::Txn& txn) {
                    return db::JobRepository(*store_).Insert(txn, row).status();
                  })
                  .ok());
  EXPECT_EQ(records_.Get(row.name).status().code(), StatusCode::kInternal);
  EXPECT_EQ(records_.List({.project = "p"}, 0, 0).status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace tpuemu::service
