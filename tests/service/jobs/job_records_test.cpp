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
  // Claim, as the tests before replicas called MarkRunning: *began when this call started it.
  Result<Job> MarkRunning(const std::string& name, bool* began) {
    ClaimResult result = ClaimResult::kGone;
    Result<Job> job = records_.Claim(name, &result);
    *began = result == ClaimResult::kStarted;
    return job;
  }

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
  Result<Job> running = MarkRunning(job.name, &began);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_TRUE(began);
  EXPECT_EQ(running->state, JobState::kRunning);
  EXPECT_TRUE(running->start_time.has_value());
  EXPECT_EQ(MarkRunning(job.name, &began)->state, JobState::kRunning);
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

TEST_F(JobRecordsTest, AdoptRequeuesARunningJobWithTheNextAttemptAndListsByState) {
  bool inserted = false, began = false;
  const Job job = *records_.InsertOrReplay(NewJob("a"), &inserted);
  Job running = *MarkRunning(job.name, &began);
  EXPECT_EQ(records_.ListInState(JobState::kRunning)->size(), 1u);
  // A restart under the same replica id takes its own jobs back.
  std::vector<JobState> previous;
  Result<std::vector<Job>> adopted = records_.Adopt(/*include_own=*/true, &previous);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  ASSERT_EQ(adopted->size(), 1u);
  EXPECT_EQ(previous, std::vector<JobState>{JobState::kRunning});
  EXPECT_EQ(adopted->front().attempt, 2);
  Job stored = *records_.Get(job.name);
  EXPECT_EQ(stored, adopted->front());
  EXPECT_EQ(stored.state, JobState::kQueued);
  EXPECT_FALSE(stored.start_time.has_value());
  EXPECT_EQ(records_.ListInState(JobState::kQueued)->size(), 1u);
  EXPECT_TRUE(records_.ListInState(JobState::kRunning)->empty());
  EXPECT_EQ(records_.Logs(job.name, 0)->back(), RequeuedLine(2));
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
  ASSERT_TRUE(MarkRunning(job.name, &began).ok());
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

// Two replicas' records on one store (replica ids "a" and "b"): the claim rules that make a job
// run on one replica and a node run one job, whichever replica queued it.
class JobRecordsReplicasTest : public JobRecordsTest {
 protected:
  void SetUp() override {
    records_.SetReplicaId("a");
    other_.SetReplicaId("b");
    ASSERT_TRUE(store_
                    ->Transaction([&](db::Txn& txn) {
                      return txn.ExecScript(
                          "INSERT INTO replicas VALUES ('a', '', 0, 0), ('b', '', 0, 0)");
                    })
                    .ok());
  }
  ClaimResult ClaimBy(JobRecords& records, const std::string& name) {
    ClaimResult result = ClaimResult::kGone;
    (void)records.Claim(name, &result);
    return result;
  }
  JobRecords other_{*store_};
};

TEST_F(JobRecordsReplicasTest, AJobStartsOnlyOnItsOwnerAndANodeRunsOneJobAcrossReplicas) {
  bool inserted = false;
  const Job a1 = *records_.InsertOrReplay(NewJob("a1"), &inserted);
  const Job b1 = *other_.InsertOrReplay(NewJob("b1"), &inserted);
  EXPECT_EQ(a1.owner, "a");
  EXPECT_EQ(ClaimBy(other_, a1.name), ClaimResult::kGone);  // a's job: not b's to start
  EXPECT_EQ(ClaimBy(other_, b1.name), ClaimResult::kBusy);  // a1 is older: it runs first
  EXPECT_EQ(ClaimBy(records_, a1.name), ClaimResult::kStarted);
  EXPECT_EQ(ClaimBy(other_, b1.name), ClaimResult::kBusy);  // node n runs a1
  // b1 ran nowhere: its steps are refused to a, and a's terminal write cannot end it.
  EXPECT_EQ(records_.RecordStep(b1.name, {}).code(), StatusCode::kAborted);
  std::optional<JobState> previous;
  (void)records_.MarkTerminal(a1.name, Ended(JobState::kSucceeded, "done"), json(), &previous);
  EXPECT_EQ(previous, JobState::kRunning);
  EXPECT_EQ(ClaimBy(other_, b1.name), ClaimResult::kStarted);
  EXPECT_EQ(ClaimBy(other_, b1.name), ClaimResult::kGone);  // not QUEUED any more
}

TEST_F(JobRecordsReplicasTest, HigherPriorityComesFirstWhicheverReplicaQueuedIt) {
  bool inserted = false;
  const Job low = *records_.InsertOrReplay(NewJob("low"), &inserted);
  Job urgent = NewJob("urgent");
  urgent.priority = 5;
  urgent = *other_.InsertOrReplay(urgent, &inserted);
  EXPECT_EQ(ClaimBy(records_, low.name), ClaimResult::kBusy);
  EXPECT_EQ(ClaimBy(other_, urgent.name), ClaimResult::kStarted);
}

TEST_F(JobRecordsReplicasTest, ADeadReplicasJobsGoToOneLiveReplicaWithTheNextAttempt) {
  bool inserted = false;
  const Job queued = *other_.InsertOrReplay(NewJob("q"), &inserted);
  Job on_m = NewJob("r");
  on_m.node_id = "m";
  on_m.name = on_m.NodeName() + "/jobs/r";
  const Job running = *other_.InsertOrReplay(on_m, &inserted);
  ASSERT_EQ(ClaimBy(other_, running.name), ClaimResult::kStarted);
  std::vector<JobState> previous;
  EXPECT_TRUE(records_.Adopt(false, &previous)->empty());  // b is alive
  ASSERT_TRUE(store_
                  ->Transaction([&](db::Txn& txn) {
                    return txn.ExecScript("DELETE FROM replicas WHERE id = 'b'");
                  })
                  .ok());
  Result<std::vector<Job>> adopted = records_.Adopt(false, &previous);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  ASSERT_EQ(adopted->size(), 2u);
  EXPECT_EQ(previous, (std::vector<JobState>{JobState::kQueued, JobState::kRunning}));
  EXPECT_EQ((*adopted)[0].name, queued.name);
  EXPECT_EQ((*adopted)[1].state, JobState::kQueued);
  EXPECT_EQ((*adopted)[1].attempt, 2);
  EXPECT_EQ((*adopted)[1].owner, "a");
  EXPECT_TRUE(records_.Adopt(false, &previous)->empty());  // adopted once
  // Their logs name the adoption and the dead replica, not a restart (issue 26).
  EXPECT_EQ(
      records_.Logs(queued.name, 0)->back(),
      "adopted from replica b, which is gone (no heartbeat): it keeps its place in the queue");
  EXPECT_EQ(records_.Logs(running.name, 0)->back(),
            "adopted from replica b, which is gone (no heartbeat): re-queued (attempt 2)");
  EXPECT_EQ(records_.Logs(running.name, 0)->back(), AdoptedLine("b", true, 2));
  // The dead replica's late writes change nothing: its step is refused, its end ignored.
  EXPECT_EQ(other_.RecordStep(running.name, {}).code(), StatusCode::kAborted);
  std::optional<JobState> ended;
  (void)other_.MarkTerminal(running.name, Ended(JobState::kFailed, "late"), json(), &ended);
  EXPECT_FALSE(ended.has_value());
  EXPECT_EQ(records_.Get(running.name)->state, JobState::kQueued);
  EXPECT_EQ(ClaimBy(records_, running.name), ClaimResult::kStarted);
}

}  // namespace
}  // namespace tpuemu::service
