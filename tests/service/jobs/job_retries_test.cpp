// maxRetries (JobManager "Faults"): a job a fault interrupts runs again while it has retries left,
// once its node can run jobs again; a node that can never run again ends it whatever its retries.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/frontend/compile_cache.h"
#include "engine/runtime/pool.h"
#include "service/jobs/job_log_lines.h"
#include "service/jobs/job_manager.h"
#include "service/jobs/job_spec.h"
#include "tests/support/wait_for.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;
using tpuemu::testing::WaitFor;

TEST(JobSpecMaxRetriesTest, IsZeroToTenAndNamedWhenOutOfRange) {
  const char* kMatmul = R"({"workload": {"matmul": {}}})";
  EXPECT_EQ(ParseJobSpec(json::parse(kMatmul))->max_retries, 0);
  json body = json::parse(kMatmul);
  body["maxRetries"] = 10;
  EXPECT_EQ(ParseJobSpec(body)->max_retries, 10);
  for (const json& bad : {json(11), json(-1), json("x"), json(1.5)}) {
    body["maxRetries"] = bad;
    Status s = ParseJobSpec(body).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad.dump();
    EXPECT_NE(s.message().find("maxRetries"), std::string::npos) << s.message();
  }
}

TEST(JobSpecMaxRetriesTest, TheCanonicalSpecShowsItOnlyWhenSet) {
  JobSpec none = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {}}})"));
  EXPECT_FALSE(JobSpecToJson(none).contains("maxRetries"));
  JobSpec three = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {}}, "maxRetries": 3})"));
  EXPECT_EQ(JobSpecToJson(three)["maxRetries"], 3);
  EXPECT_EQ(ParseJobSpec(JobSpecToJson(three))->max_retries, 3);
  EXPECT_NE(JobSpecHash(none), JobSpecHash(three));
}

class JobRetriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(db::Store::Open(":memory:").value());
    writes_ = std::make_unique<WritePath>(*store_, Catalog::Default(), WritePathOptions{});
    nodes_ = std::make_unique<NodeManager>(
        *store_, *writes_, scheduler_, Catalog::Default(),
        NodeManagerOptions{.provisioning_delay_ms = 0, .transition_delay_ms = 0});
    jobs_ = std::make_unique<JobManager>(*store_, *nodes_, scheduler_, pool_, cache_);
    nodes_->SetStateObserver(
        [this](const Node& n, NodeState previous) { jobs_->OnNodeStateChanged(n, previous); });
    NodeSpec spec;
    spec.accelerator_type = "v4-8";
    spec.runtime_version = "tpu-ubuntu2204-base";
    ASSERT_TRUE(nodes_->Create(key_, spec).ok());
    ASSERT_TRUE(WaitFor([&] {
      Result<Node> n = nodes_->Get(key_);
      return n.ok() && n->state == NodeState::kReady;
    }));
  }
  void TearDown() override {
    scheduler_.Stop();
    // The node writes' thread calls the observer into jobs_: it ends first (as App::Stop does).
    writes_->batcher().Stop();
    jobs_.reset();
    nodes_.reset();
    writes_.reset();
  }
  // A job that runs until something ends it, with `max_retries`.
  Job SubmitLong(int max_retries) {
    json body = json::parse(
        R"({"workload": {"mlp": {"layers": 4, "batch": 256, "hidden": 512, "steps": 10000}}})");
    body["maxRetries"] = max_retries;
    Result<JobSpec> spec = ParseJobSpec(body, jobs_->limits());
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    if (!spec.ok()) return Job{};
    Result<Job> job = jobs_->Submit({.node = key_, .job_id = "", .spec = std::move(spec).value()});
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : Job{};
  }
  bool WaitState(const std::string& name, JobState state, int64_t attempt) {
    return WaitFor(
        [&] {
          Result<Job> job = jobs_->Get(name);
          return job.ok() && job->state == state && job->attempt == attempt;
        },
        std::chrono::seconds(30));
  }
  std::string Log(const std::string& name) {
    std::string out;
    Result<std::vector<std::string>> lines = jobs_->Logs(name, 0);
    if (!lines.ok()) return lines.status().ToString();
    for (const std::string& line : *lines) out += line + "\n";
    return out;
  }

  Scheduler scheduler_;
  engine::Pool pool_{2};
  engine::CompileCache cache_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<WritePath> writes_;
  std::unique_ptr<NodeManager> nodes_;
  std::unique_ptr<JobManager> jobs_;
  NodeKey key_{"p", "us-central2-b", "tpu1"};
  const std::string kFault = "interrupted by host maintenance: test";
};

TEST_F(JobRetriesTest, ARunningJobWithRetriesLeftIsRequeuedAndRunsOnceTheNodeResumes) {
  // Shared with the observer, which runs on the job's thread after each commit and may still be
  // called after this test's last check: it keeps the record alive itself.
  struct Transitions {
    std::mutex mu;
    std::vector<std::pair<JobState, std::optional<JobState>>> seen;
  };
  auto transitions = std::make_shared<Transitions>();
  jobs_->AddTransitionObserver([transitions](const Job& job, std::optional<JobState> previous) {
    std::lock_guard lock(transitions->mu);
    transitions->seen.push_back({job.state, previous});
  });
  Job job = SubmitLong(1);
  EXPECT_EQ(job.max_retries, 1);
  ASSERT_TRUE(WaitState(job.name, JobState::kRunning, 1));
  jobs_->InterruptNodeJobs(key_.Name(), kFault);
  ASSERT_TRUE(WaitState(job.name, JobState::kQueued, 2));
  // Observers hear of a change after it committed: wait for the re-queue to reach them.
  EXPECT_TRUE(WaitFor([&] {
    std::lock_guard lock(transitions->mu);
    return !transitions->seen.empty() &&
           transitions->seen.back() ==
               std::make_pair(JobState::kQueued, std::optional<JobState>(JobState::kRunning));
  }));
  EXPECT_NE(Log(job.name).find(kFault + "; retry 1 of 1: re-queued"), std::string::npos)
      << Log(job.name);
  // Held until the node resumes: still QUEUED once the interrupted run has let go of the node.
  ASSERT_TRUE(WaitFor([&] { return jobs_->ReservedHostBytes() == 0; }));
  EXPECT_EQ(jobs_->Get(job.name)->state, JobState::kQueued);

  jobs_->ResumeNode(key_.Name());
  ASSERT_TRUE(WaitState(job.name, JobState::kRunning, 2));
  EXPECT_NE(Log(job.name).find("running (attempt 2)"), std::string::npos);
  // The retry is used up: the next fault ends it.
  jobs_->InterruptNodeJobs(key_.Name(), kFault);
  ASSERT_TRUE(WaitState(job.name, JobState::kFailed, 2));
  EXPECT_EQ(jobs_->Get(job.name)->reason, kFault);
}

TEST_F(JobRetriesTest, QueuedJobsWithRetriesKeepTheirPlaceTheOthersFail) {
  Job running = SubmitLong(0);
  ASSERT_TRUE(WaitState(running.name, JobState::kRunning, 1));
  Job keeps = SubmitLong(2);
  Job fails = SubmitLong(0);
  jobs_->InterruptNodeJobs(key_.Name(), kFault);
  ASSERT_TRUE(WaitState(running.name, JobState::kFailed, 1));
  ASSERT_TRUE(WaitState(fails.name, JobState::kFailed, 1));
  EXPECT_EQ(jobs_->Get(running.name)->reason, kFault);
  EXPECT_EQ(jobs_->Get(keeps.name)->state, JobState::kQueued);
  EXPECT_NE(Log(keeps.name).find("no retry used"), std::string::npos) << Log(keeps.name);
  // A job submitted while the node is held waits too, saying why.
  Job late = SubmitLong(0);
  EXPECT_NE(Log(late.name).find(NodeHeldLine()), std::string::npos) << Log(late.name);
  EXPECT_EQ(jobs_->Get(late.name)->state, JobState::kQueued);

  jobs_->ResumeNode(key_.Name());
  ASSERT_TRUE(WaitState(keeps.name, JobState::kRunning, 1));  // its first run: no retry used
  ASSERT_TRUE(jobs_->Cancel(keeps.name).ok());
  ASSERT_TRUE(WaitState(late.name, JobState::kRunning, 1));
  ASSERT_TRUE(jobs_->Cancel(late.name).ok());
  EXPECT_TRUE(WaitState(late.name, JobState::kCancelled, 1));
}

TEST_F(JobRetriesTest, APreemptedNodeEndsItsJobsWhateverTheirRetriesSayingSo) {
  Job job = SubmitLong(3);
  ASSERT_TRUE(WaitState(job.name, JobState::kRunning, 1));
  Node preempted = *nodes_->Get(key_);
  preempted.state = NodeState::kPreempted;
  jobs_->OnNodeStateChanged(preempted, NodeState::kReady);
  ASSERT_TRUE(WaitState(job.name, JobState::kFailed, 1));
  const std::string reason = *jobs_->Get(job.name)->reason;
  EXPECT_NE(reason.find("was preempted"), std::string::npos) << reason;
  EXPECT_NE(reason.find("retries (maxRetries) cannot run there"), std::string::npos) << reason;
}

TEST_F(JobRetriesTest, ACancelWinsOverARetry) {
  Job job = SubmitLong(2);
  ASSERT_TRUE(WaitState(job.name, JobState::kRunning, 1));
  jobs_->InterruptNodeJobs(key_.Name(), kFault);
  ASSERT_TRUE(WaitState(job.name, JobState::kQueued, 2));
  ASSERT_TRUE(jobs_->Cancel(job.name).ok());  // while it waits for the node
  ASSERT_TRUE(WaitState(job.name, JobState::kCancelled, 2));
  EXPECT_EQ(jobs_->Get(job.name)->reason, "cancelled by the user");
}

}  // namespace
}  // namespace tpuemu::service
