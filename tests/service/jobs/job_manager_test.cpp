#include "service/jobs/job_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "engine/frontend/compile_cache.h"
#include "engine/runtime/pool.h"
#include "service/jobs/job_spec.h"
#include "service/workloads/workloads.h"
#include "tests/support/wait_for.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;
using tpuemu::testing::WaitFor;

TEST(JobSpecTest, ParsesDefaultsAndNamesTheBadField) {
  Result<JobSpec> spec = ParseJobSpec(json::parse(R"({"workload": {"matmul": {"m": 8}}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->kind, WorkloadKind::kMatmul);
  EXPECT_EQ(spec->m, 8);
  EXPECT_EQ(spec->n, 128);

  auto error = [](const char* text) { return ParseJobSpec(json::parse(text)).status(); };
  Status s = error(R"({"workload": {"mlp": {"layers": 0}}})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "workload.mlp.layers must be 1..64");
  EXPECT_NE(error(R"({"workload": {"matmul": {}}, "steps": 10001})").message().find("steps"),
            std::string::npos);
  EXPECT_NE(error(R"({"workload": {"matmul": {}}, "timeoutSeconds": 90000})")
                .message()
                .find("timeoutSeconds"),
            std::string::npos);
  EXPECT_NE(
      error(R"({"workload": {"matmul": {}}, "precision": "LOW"})").message().find("precision"),
      std::string::npos);
  EXPECT_NE(error(R"({"workload": {"matmul": {}}, "bogus": 1})").message().find("bogus"),
            std::string::npos);
  EXPECT_NE(error(R"({})").message().find("workload"), std::string::npos);
  EXPECT_NE(error(R"({"program": {"name": "p", "ops": [{"id": "x", "op": "nope"}],
                      "outputs": []}})")
                .message()
                .find("program"),
            std::string::npos);
}

TEST(JobSpecTest, HashIgnoresRequestIdButNotTheSpec) {
  JobSpec a = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {}}, "requestId": "x"})"));
  JobSpec b = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {}}, "requestId": "y"})"));
  JobSpec c = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {"m": 64}}})"));
  EXPECT_EQ(JobSpecHash(a), JobSpecHash(b));
  EXPECT_NE(JobSpecHash(a), JobSpecHash(c));
}

TEST(JobSpecTest, AProgramIsDecodedOnceAndItsGraphSharedWithTheWorkload) {
  Result<JobSpec> spec = ParseJobSpec(json::parse(R"({"program": {"name": "p", "ops": [
      {"id": "a", "op": "parameter", "shape": [4, 4], "fill": 1.0},
      {"id": "b", "op": "dot", "inputs": ["a", "a"]}], "outputs": ["b"]}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_NE(spec->graph, nullptr);
  Result<Workload> w = Workload::Build(*spec);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(&w->graph(), spec->graph.get());  // not parsed or copied again
  JobSpec without = *spec;
  without.graph.reset();
  EXPECT_EQ(Workload::Build(without).status().code(), StatusCode::kInvalidArgument);

  const CanonicalSpec canonical = Canonicalize(*spec);
  EXPECT_EQ(canonical.json, JobSpecToJson(*spec).dump());
  EXPECT_EQ(canonical.hash, JobSpecHash(*spec));
  EXPECT_EQ(canonical.hash.size(), 16u);
}

class JobManagerTest : public ::testing::Test {
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
    MakeNode(key_, "v4-8");
  }
  void TearDown() override {
    scheduler_.Stop();
    // The node writes' thread calls the observer into jobs_: it ends first (as App::Stop does).
    writes_->batcher().Stop();
    jobs_.reset();
    nodes_.reset();
    writes_.reset();
  }
  void MakeNode(const NodeKey& key, const char* type) {
    NodeSpec spec;
    spec.accelerator_type = type;
    spec.runtime_version = "tpu-ubuntu2204-base";
    ASSERT_TRUE(nodes_->Create(key, spec).ok());
    ASSERT_TRUE(WaitFor([&] {
      Result<Node> n = nodes_->Get(key);
      return n.ok() && n->state == NodeState::kReady;
    }));
  }
  // Submits `body` decoded as the API does (api/job_codec.h).
  Result<Job> SubmitJson(const NodeKey& key, const json& body, bool* created = nullptr) {
    Result<JobSpec> spec = ParseJobSpec(body, jobs_->limits());
    if (!spec.ok()) return spec.status();
    return jobs_->Submit({.node = key, .job_id = "", .spec = std::move(spec).value()}, created);
  }
  Job Submit(const char* body, const NodeKey* key = nullptr) {
    Result<Job> row = SubmitJson(key ? *key : key_, json::parse(body));
    EXPECT_TRUE(row.ok()) << row.status().ToString();
    return row.ok() ? *row : Job{};
  }
  Job WaitTerminal(const std::string& name) {
    Job last;
    EXPECT_TRUE(WaitFor(
        [&] {
          Result<Job> r = jobs_->Get(name);
          if (r.ok()) last = *r;
          return r.ok() && IsTerminal(r->state);
        },
        std::chrono::seconds(30)))
        << name << " is " << JobStateName(last.state);
    return last;
  }

  Scheduler scheduler_;
  engine::Pool pool_{2};
  engine::CompileCache cache_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<WritePath> writes_;
  std::unique_ptr<NodeManager> nodes_;
  std::unique_ptr<JobManager> jobs_;
  NodeKey key_{"p", "us-central2-b", "tpu1"};
};

constexpr const char* kLong =
    R"({"workload": {"mlp": {"layers": 4, "batch": 256, "hidden": 512, "steps": 10000}}})";

TEST_F(JobManagerTest, MlpJobSucceedsWithFallingLossStepsLogsAndMetrics) {
  Job job = Submit(R"({"workload": {"mlp": {"steps": 20, "hidden": 32}}})");
  EXPECT_EQ(job.state, JobState::kQueued);
  Job done = WaitTerminal(job.name);
  ASSERT_EQ(done.state, JobState::kSucceeded) << done.reason.value_or("");
  EXPECT_EQ(done.exit_code, 0);
  json result = json::parse(*done.result_json);
  Result<json> metrics = jobs_->Metrics(job.name);
  ASSERT_TRUE(metrics.ok());
  const json& steps = (*metrics)["steps"];
  ASSERT_EQ(steps.size(), 20u);
  EXPECT_LT(steps[19]["loss"].get<double>(), steps[0]["loss"].get<double>());
  EXPECT_GT(steps[0]["cycles"].get<int64_t>(), 0);
  EXPECT_GT(steps[0]["mxuUtilization"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(result["finalLoss"].get<double>(), steps[19]["loss"].get<double>());
  EXPECT_FALSE(result["metrics"]["compileCacheHit"].get<bool>());
  Result<std::vector<std::string>> logs = jobs_->Logs(job.name, 0);
  ASSERT_TRUE(logs.ok());
  int step_lines = 0;
  for (const std::string& l : *logs) step_lines += l.starts_with("step ");
  EXPECT_EQ(step_lines, 20);
}

TEST_F(JobManagerTest, SameShapeHitsTheCacheAndAShapeChangeRecompiles) {
  auto hit = [&](const char* body) {
    Job done = WaitTerminal(Submit(body).name);
    EXPECT_EQ(done.state, JobState::kSucceeded);
    return json::parse(done.result_json.value_or("{}"))["metrics"]["compileCacheHit"].get<bool>();
  };
  EXPECT_FALSE(hit(R"({"workload": {"matmul": {"m": 64, "n": 32, "k": 16}}})"));
  EXPECT_TRUE(hit(R"({"workload": {"matmul": {"m": 64, "n": 32, "k": 16}}, "seed": 5})"));
  EXPECT_FALSE(hit(R"({"workload": {"matmul": {"m": 64, "n": 32, "k": 32}}})"));
}

TEST_F(JobManagerTest, HbmOverflowFailsWithXlaMessage) {
  json program = {{"name", "big"}, {"ops", json::array()}, {"outputs", {"p0"}}};
  for (int i = 0; i < 160; ++i) {
    program["ops"].push_back({{"id", "p" + std::to_string(i)},
                              {"op", "parameter"},
                              {"shape", {4096, 4096}},
                              {"fill", 1.0}});
  }
  json body = {{"program", program}};
  // v2: 16 GiB per chip over 2 TensorCores; 160 x 64 MiB does not fit in 8 GiB.
  const NodeKey small{"p", "us-central1-b", "v2"};
  MakeNode(small, "v2-8");
  Result<Job> job = SubmitJson(small, body);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Job done = WaitTerminal(job->name);
  EXPECT_EQ(done.state, JobState::kFailed);
  EXPECT_EQ(done.exit_code, 1);
  EXPECT_NE(done.reason->find("Ran out of memory in memory space hbm"), std::string::npos)
      << *done.reason;
}

TEST_F(JobManagerTest, CancelRunningAndQueuedJobs) {
  Job running = Submit(kLong);
  Job queued = Submit(R"({"workload": {"matmul": {}}})");
  ASSERT_TRUE(WaitFor([&] { return jobs_->Get(running.name)->state == JobState::kRunning; }));
  EXPECT_EQ(jobs_->Get(queued.name)->state, JobState::kQueued);  // one job per node at a time
  ASSERT_TRUE(jobs_->Cancel(queued.name).ok());
  ASSERT_TRUE(jobs_->Cancel(running.name).ok());
  Job a = WaitTerminal(running.name);
  Job b = WaitTerminal(queued.name);
  EXPECT_EQ(a.state, JobState::kCancelled);
  EXPECT_EQ(a.exit_code, 130);
  EXPECT_EQ(b.state, JobState::kCancelled);
  EXPECT_EQ(jobs_->Cancel(running.name)->state, JobState::kCancelled);  // idempotent
  EXPECT_TRUE(jobs_->Delete(running.name).ok());
  EXPECT_EQ(jobs_->Get(running.name).status().code(), StatusCode::kNotFound);
}

TEST_F(JobManagerTest, TimeoutEndsTimedOut) {
  std::string body = kLong;
  body.insert(body.size() - 1, R"(, "timeoutSeconds": 1)");
  Job done = WaitTerminal(Submit(body.c_str()).name);
  EXPECT_EQ(done.state, JobState::kTimedOut);
  EXPECT_EQ(done.exit_code, 124);
  EXPECT_NE(done.reason->find("timeoutSeconds"), std::string::npos);
}

TEST_F(JobManagerTest, RequestIdIsIdempotent) {
  const char* body = R"({"workload": {"matmul": {}}, "requestId": "r-1"})";
  bool created = false;
  Result<Job> a = SubmitJson(key_, json::parse(body), &created);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(created);
  Result<Job> b = SubmitJson(key_, json::parse(body), &created);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(created);
  EXPECT_EQ(a->name, b->name);
  Result<Job> c =
      SubmitJson(key_, json::parse(R"({"workload": {"matmul": {"m": 1}}, "requestId": "r-1"})"));
  EXPECT_EQ(c.status().code(), StatusCode::kAlreadyExists);
}

TEST_F(JobManagerTest, OnlyReadyNodesAcceptAndStoppingCancels) {
  EXPECT_EQ(SubmitJson({"p", "us-central2-b", "nope"}, json::parse(kLong)).status().code(),
            StatusCode::kNotFound);
  Job job = Submit(kLong);
  ASSERT_TRUE(WaitFor([&] { return jobs_->Get(job.name)->state == JobState::kRunning; }));
  ASSERT_TRUE(nodes_->Stop(key_).ok());
  Job done = WaitTerminal(job.name);
  EXPECT_EQ(done.state, JobState::kCancelled);
  EXPECT_NE(done.reason->find("is stopping"), std::string::npos) << *done.reason;
  ASSERT_TRUE(WaitFor([&] { return nodes_->Get(key_)->state == NodeState::kStopped; }));
  EXPECT_EQ(SubmitJson(key_, json::parse(kLong)).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(JobManagerTest, FourNodesTenJobsEachAllSucceed) {
  std::vector<NodeKey> keys{key_};
  for (int i = 2; i <= 4; ++i) {
    keys.push_back({"p", "us-central2-b", "tpu" + std::to_string(i)});
    MakeNode(keys.back(), "v4-8");
  }
  std::vector<std::string> names;
  for (int j = 0; j < 10; ++j) {
    for (const NodeKey& k : keys) {
      names.push_back(Submit(R"({"workload": {"matmul": {"m": 32, "n": 32, "k": 32}}})", &k).name);
    }
  }
  for (const std::string& n : names) EXPECT_EQ(WaitTerminal(n).state, JobState::kSucceeded);
  JobListRequest all;
  all.project = "p";
  all.zone = "-";
  all.state = JobState::kSucceeded;
  Result<JobPage> page = jobs_->List(all);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->jobs.size(), 40u);
}

// Through the group commit, as tpuemud runs them: a one-step job's compile record and end are
// queued without the run waiting (JobRecords::RecordCompileLater, MarkTerminalLater), and each
// job still ends with its step, profile, lines in order and its waiter woken with the end.
TEST_F(JobManagerTest, TinyJobsThroughTheGroupCommitEndWithStepProfileAndLinesInOrder) {
  jobs_->SetWriteBatcher(&writes_->batcher());
  std::vector<NodeKey> keys{key_};
  for (int i = 2; i <= 4; ++i) {
    keys.push_back({"p", "us-central2-b", "tpu" + std::to_string(i)});
    MakeNode(keys.back(), "v4-8");
  }
  std::vector<std::string> names;
  for (int j = 0; j < 5; ++j) {
    for (const NodeKey& k : keys) {
      names.push_back(Submit(R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}})", &k).name);
    }
  }
  std::mutex mu;
  std::map<std::string, std::string> woken;  // job -> the state its waiter was told
  for (const std::string& n : names) {
    jobs_->OnTerminal(n, [&, n](Result<Job> r) {
      std::lock_guard lock(mu);
      woken[n] = r.ok() ? std::string(JobStateName(r->state)) : r.status().ToString();
    });
  }
  for (const std::string& n : names) {
    Job done = WaitTerminal(n);
    ASSERT_EQ(done.state, JobState::kSucceeded) << n << ": " << done.reason.value_or("");
    Result<json> metrics = jobs_->Metrics(n);
    ASSERT_TRUE(metrics.ok());
    EXPECT_EQ((*metrics)["steps"].size(), 1u) << n;
    EXPECT_EQ((*metrics)["ops"].size(), 1u) << n;
    Result<std::vector<std::string>> logs = jobs_->Logs(n, 0);
    ASSERT_TRUE(logs.ok());
    ASSERT_GE(logs->size(), 5u) << n;
    const std::vector<std::string>& l = *logs;
    const size_t end = l.size() - 1;
    EXPECT_TRUE(l[0].starts_with("queued on ")) << l[0];
    EXPECT_TRUE(l[end - 3].starts_with("running ")) << l[end - 3];
    EXPECT_TRUE(l[end - 2].starts_with("compile: ")) << l[end - 2];
    EXPECT_TRUE(l[end - 1].starts_with("step 0 ")) << l[end - 1];
    EXPECT_TRUE(l[end].starts_with("SUCCEEDED (exit code 0)")) << l[end];
  }
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(mu);
    return woken.size() == names.size();
  }));
  std::lock_guard lock(mu);
  for (const auto& [name, state] : woken) EXPECT_EQ(state, "SUCCEEDED") << name;
}

TEST_F(JobManagerTest, QueueRunsHigherPriorityFirstThenArrivalOrder) {
  Job blocker = Submit(kLong);
  ASSERT_TRUE(WaitFor([&] { return jobs_->Get(blocker.name)->state == JobState::kRunning; }));
  Job low = Submit(R"({"workload": {"matmul": {}}, "priority": 0})");
  Job high_a = Submit(R"({"workload": {"matmul": {}}, "priority": 5})");
  Job high_b = Submit(R"({"workload": {"matmul": {}}, "priority": 5})");
  ASSERT_TRUE(jobs_->Cancel(blocker.name).ok());
  Job l = WaitTerminal(low.name);
  Job a = WaitTerminal(high_a.name);
  Job b = WaitTerminal(high_b.name);
  ASSERT_TRUE(l.start_time && a.start_time && b.start_time);
  // RFC 3339 with fixed-width microseconds: string order is time order.
  EXPECT_LT(*a.start_time, *b.start_time);
  EXPECT_LT(*b.start_time, *l.start_time);
  EXPECT_LE(*a.end_time, *b.start_time);  // one job at a time on a node
}

TEST_F(JobManagerTest, DeletingTheNodeCancelsItsQueuedJobs) {
  Job running = Submit(kLong);
  Job queued = Submit(R"({"workload": {"matmul": {}}})");
  ASSERT_TRUE(nodes_->Delete(key_).ok());
  EXPECT_EQ(WaitTerminal(running.name).state, JobState::kCancelled);
  Job q = WaitTerminal(queued.name);
  EXPECT_EQ(q.state, JobState::kCancelled);
  EXPECT_NE(q.reason->find("is deleting"), std::string::npos) << *q.reason;
}

TEST_F(JobManagerTest, DataParallelCnnAddsAllReduceCycles) {
  Job one = WaitTerminal(Submit(R"({"workload": {"cnn": {"steps": 2}}})").name);
  Job two = WaitTerminal(Submit(R"({"workload": {"cnn": {"steps": 2}}, "cores": 2})").name);
  ASSERT_EQ(one.state, JobState::kSucceeded) << one.reason.value_or("");
  ASSERT_EQ(two.state, JobState::kSucceeded) << two.reason.value_or("");
  json m1 = json::parse(*one.result_json)["metrics"];
  json m2 = json::parse(*two.result_json)["metrics"];
  EXPECT_EQ(m1["allReduceCyclesPerStep"], 0);
  EXPECT_GT(m2["allReduceCyclesPerStep"].get<int64_t>(), 0);
  EXPECT_EQ(
      SubmitJson(key_, json::parse(R"({"workload": {"cnn": {}}, "cores": 16})")).status().code(),
      StatusCode::kInvalidArgument);  // v4-8 has 8 TensorCores
}

TEST_F(JobManagerTest, OnTerminalFiresOnceTheJobEnds) {
  Job job = Submit(R"({"workload": {"matmul": {}}, "steps": 3})");
  std::atomic<int> calls{0};
  std::optional<JobState> state;
  std::mutex mu;
  jobs_->OnTerminal(job.name, [&](Result<Job> r) {
    std::lock_guard lock(mu);
    if (r.ok()) state = r->state;
    ++calls;
  });
  ASSERT_TRUE(WaitFor([&] { return calls.load() == 1; }));
  std::lock_guard lock(mu);
  EXPECT_EQ(state, JobState::kSucceeded);
}

}  // namespace
}  // namespace tpuemu::service
