// The host-memory budget through real HTTP (issue 18 item 2): a job above the per-job limit is
// refused at submit with 400 naming both figures; jobs that fit wait QUEUED, with the reason in
// their log, while the budget is taken, start once it frees, and can be cancelled while waiting;
// and the daemon's peak RSS under concurrent heavy jobs stays within the budget plus the
// documented overhead (README "Host memory"). hlo jobs go through the same admission, sized by
// the evaluator's liveness sweep over their module (engine/hlo/host_memory.h).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/hlo/host_memory.h"
#include "engine/hlo/parser.h"
#include "service/jobs/host_memory_budget.h"
#include "service/jobs/job_compile.h"
#include "service/workloads/workloads.h"
#include "tests/e2e/api_paths.h"
#include "tests/e2e/api_server.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

constexpr char kNodes[] = "/v2/projects/p/locations/us-central2-b/nodes";
// Runs until cancelled (10000 steps of a few ms).
constexpr char kLongSmallJob[] =
    R"({"workload": {"mlp": {"layers": 2, "hidden": 256, "batch": 128, "steps": 10000}}})";
constexpr char kShortSmallJob[] =
    R"({"workload": {"mlp": {"layers": 2, "hidden": 256, "batch": 128, "steps": 2}}})";

// The bytes Submit plans for the job `body` on a v4-8.
int64_t Planned(const char* body) {
  service::JobSpec spec = *service::ParseJobSpec(json::parse(body));
  service::Workload w = *service::Workload::BuildGraphOnly(spec);
  engine::CompileCache cache;
  Result<service::CompiledJob> compiled =
      service::CompileJob(cache, "j", spec, w, *engine::Slice::FromAcceleratorType("v4-8"));
  EXPECT_TRUE(compiled.ok());
  return service::JobHostBytes(compiled->program(), w.graph(), w.shards());
}

// An hlo job's body and the bytes Submit plans for it (one device).
std::string HloJob(const std::string& text, bool estimate_only = false) {
  return json{{"hlo", {{"text", text}, {"estimateOnly", estimate_only}}}}.dump();
}
int64_t PlannedHlo(const std::string& text) {
  Result<engine::hlo::Module> module = engine::hlo::ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? engine::hlo::PeakHostBytes(*module) : 0;
}
// f32[side, side] in, its negation out: three such arrays at the peak (parameter, result, the
// previous step's result).
std::string NegateModule(int side) {
  const std::string shape = "f32[" + std::to_string(side) + "," + std::to_string(side) + "]";
  return "HloModule negate\nENTRY e {\n  x = " + shape + " parameter(0)\n  ROOT y = " + shape +
         " negate(x)\n}\n";
}

class HostMemoryApiTest : public ::testing::Test {
 protected:
  void Start(service::JobLimits limits) {
    server_ = std::make_unique<ApiServer>(
        service::NodeManagerOptions{.provisioning_delay_ms = 0, .transition_delay_ms = 0},
        api::HttpServerOptions{}, service::ObservabilityOptions{.utilization_interval_ms = 0},
        limits);
    // Longer than Wait's 60 s long-poll, so a slow (sanitized) job ends the wait, not the socket.
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_->port(), std::chrono::seconds(75));
  }
  ClientResponse Call(const std::string& method, const std::string& target,
                      const std::string& body = "") {
    Result<ClientResponse> r = client_->Request(method, target, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClientResponse{};
  }
  void CreateReady(const std::string& id) {
    ClientResponse r = Call("POST", std::string(kNodes) + "?nodeId=" + id, kNodeBody);
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_FALSE(WaitOperation(*client_, r.Json()["name"]).is_null());
  }
  // The job's name, after a 200.
  std::string Submit(const std::string& node, const char* body) {
    ClientResponse r = Call("POST", std::string(kNodes) + "/" + node + "/jobs", body);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json().value("name", "");
  }
  std::string State(const std::string& job) {
    return Call("GET", "/v2/" + job).Json().value("state", "");
  }
  bool LogHas(const std::string& job, const std::string& needle) {
    const json logs = Call("GET", "/v2/" + job + "/logs").Json();  // owns what the loop reads
    for (const json& line : logs["lines"]) {
      if (line.get<std::string>().find(needle) != std::string::npos) return true;
    }
    return false;
  }
  std::string Wait(const std::string& job) {
    return Call("GET", "/v2/" + job + ":wait?timeout=60s").Json().value("state", "");
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(HostMemoryApiTest, AJobAboveTheLimitIsRefusedAtSubmitNamingBothFigures) {
  Start({.max_job_host_memory_bytes = 64 << 20, .host_memory_budget_bytes = int64_t{1} << 30});
  CreateReady("n1");
  // The issue's probe: 64 layers of 4096x4096 weights (4 GiB of them alone).
  const char* huge =
      R"({"workload": {"mlp": {"layers": 64, "hidden": 4096, "batch": 4096}}, "timeoutSeconds": 3})";
  ClientResponse r = Call("POST", std::string(kNodes) + "/n1/jobs", huge);
  ASSERT_EQ(r.status, 400) << r.body;
  const json error = r.Json()["error"];
  EXPECT_EQ(error["status"], "INVALID_ARGUMENT");
  const std::string message = error["message"];
  EXPECT_NE(message.find("needs " + std::to_string(Planned(huge)) + " bytes"), std::string::npos)
      << message;
  EXPECT_NE(message.find(std::to_string(64 << 20) + " bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("--max-job-host-memory-bytes"), std::string::npos) << message;
  // Nothing was stored, and a job within the limit is accepted.
  EXPECT_TRUE(
      Call("GET", std::string(kNodes) + "/n1/jobs").Json().value("jobs", json::array()).empty());
  EXPECT_EQ(Wait(Submit("n1", kShortSmallJob)), "SUCCEEDED");
}

TEST_F(HostMemoryApiTest, JobsThatDoNotFitTogetherWaitQueuedThenRun) {
  const int64_t one = Planned(kLongSmallJob);
  ASSERT_EQ(one, Planned(kShortSmallJob)) << "the same program, whatever the step count";
  // Room for one such job, not two.
  Start({.host_memory_budget_bytes = one + one / 2});
  for (const char* id : {"n1", "n2", "n3"}) CreateReady(id);
  const std::string running = Submit("n1", kLongSmallJob);
  ASSERT_TRUE(WaitFor([&] { return State(running) == "RUNNING"; }));

  const std::string waiting = Submit("n2", kShortSmallJob);
  ASSERT_TRUE(WaitFor([&] { return LogHas(waiting, "waiting for host memory"); }))
      << Call("GET", "/v2/" + waiting + "/logs").body << Call("GET", "/v2/" + running).body;
  EXPECT_EQ(State(waiting), "QUEUED");
  EXPECT_TRUE(LogHas(waiting, "needs " + std::to_string(one) + " bytes")) << one;

  // A waiting job can be cancelled; it then holds nothing back.
  const std::string cancelled = Submit("n3", kShortSmallJob);
  ASSERT_TRUE(WaitFor([&] { return LogHas(cancelled, "waiting for host memory"); }));
  EXPECT_EQ(Call("POST", "/v2/" + cancelled + ":cancel").status, 200);
  EXPECT_EQ(Wait(cancelled), "CANCELLED");
  EXPECT_EQ(State(waiting), "QUEUED");

  // Once the running job ends, the waiting one gets its memory and runs to the end.
  EXPECT_EQ(Call("POST", "/v2/" + running + ":cancel").status, 200);
  EXPECT_EQ(Wait(running), "CANCELLED");
  EXPECT_EQ(Wait(waiting), "SUCCEEDED");
  EXPECT_TRUE(LogHas(waiting, "running (attempt 1)"));
}

TEST_F(HostMemoryApiTest, AnHloJobAboveTheLimitIsRefusedAtSubmitNamingItsBytes) {
  Start({.max_job_host_memory_bytes = 64 << 20, .host_memory_budget_bytes = int64_t{1} << 30});
  CreateReady("n1");
  const std::string big = NegateModule(4096);  // 64 MiB per array
  const int64_t planned = PlannedHlo(big);
  ASSERT_EQ(planned, 3 * (int64_t{64} << 20));
  ClientResponse r = Call("POST", std::string(kNodes) + "/n1/jobs", HloJob(big));
  ASSERT_EQ(r.status, 400) << r.body;
  const std::string message = r.Json()["error"]["message"];
  EXPECT_NE(message.find("needs " + std::to_string(planned) + " bytes"), std::string::npos)
      << message;
  EXPECT_NE(message.find("--max-job-host-memory-bytes"), std::string::npos) << message;
  // Pricing it holds no value: an estimate-only job of the same module is accepted.
  EXPECT_EQ(Wait(Submit("n1", HloJob(big, /*estimate_only=*/true).c_str())), "SUCCEEDED");
}

TEST_F(HostMemoryApiTest, AnHloJobWaitsQueuedWhileTheBudgetIsTaken) {
  const std::string module = NegateModule(512);
  const int64_t hlo = PlannedHlo(module), mlp = Planned(kLongSmallJob);
  ASSERT_GT(hlo, 0);
  // Either job fits alone, not both at once.
  Start({.host_memory_budget_bytes = hlo + mlp - 1});
  for (const char* id : {"n1", "n2"}) CreateReady(id);
  const std::string running = Submit("n1", kLongSmallJob);
  ASSERT_TRUE(WaitFor([&] { return State(running) == "RUNNING"; }));
  const std::string waiting = Submit("n2", HloJob(module).c_str());
  ASSERT_TRUE(WaitFor([&] { return LogHas(waiting, "waiting for host memory"); }))
      << Call("GET", "/v2/" + waiting + "/logs").body;
  EXPECT_EQ(State(waiting), "QUEUED");
  EXPECT_TRUE(LogHas(waiting, "needs " + std::to_string(hlo) + " bytes")) << hlo;
  EXPECT_EQ(Call("POST", "/v2/" + running + ":cancel").status, 200);
  EXPECT_EQ(Wait(running), "CANCELLED");
  EXPECT_EQ(Wait(waiting), "SUCCEEDED");
}

// Resident bytes of this process: VmHWM (the peak) or VmRSS from /proc/self/status.
int64_t StatusBytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    int64_t kib = 0;
    if (fields >> name >> kib && name == key + ":") return kib * 1024;
  }
  return 0;
}

TEST_F(HostMemoryApiTest, PeakRssStaysWithinTheBudgetPlusOverheadUnderConcurrentHeavyJobs) {
  // Three heavy jobs on three nodes; each plans ~200 MB, the budget admits one at a time.
  const char* heavy =
      R"({"workload": {"mlp": {"layers": 6, "hidden": 2048, "batch": 512, "steps": 1}}})";
  const int64_t one = Planned(heavy);
  ASSERT_GT(one, int64_t{150} << 20);
  const int64_t budget = one + one / 2;
  Start({.host_memory_budget_bytes = budget});
  for (const char* id : {"n1", "n2", "n3"}) CreateReady(id);
  const int64_t before = StatusBytes("VmRSS");
  std::vector<std::string> jobs;
  for (const char* id : {"n1", "n2", "n3"}) jobs.push_back(Submit(id, heavy));
  for (const std::string& job : jobs) EXPECT_EQ(Wait(job), "SUCCEEDED");
  const int64_t peak = StatusBytes("VmHWM");
  // README "Host memory": per-process caches and allocator slack beyond the plan.
  const int64_t overhead = service::HostMemoryOverheadBytes(/*engine_threads=*/2);  // ApiServer's
  std::printf("budget %lld B, one job %lld B, RSS before %lld B, peak %lld B (+%lld B)\n",
              static_cast<long long>(budget), static_cast<long long>(one),
              static_cast<long long>(before), static_cast<long long>(peak),
              static_cast<long long>(peak - before));
  EXPECT_LE(peak - before, budget + overhead);
}

}  // namespace
}  // namespace tpuemu::testing
