// Observability through real HTTP (issue 5): torch_xla-style metrics reports (job and node, cache
// hit vs miss), Prometheus /metrics checked by promtool, utilization history, the events feed with
// its long-poll, and POST /_emulator/reset wiping events and history.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "api/auth.h"
#include "service/common/clock.h"
#include "tests/e2e/api_server.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

constexpr char kObsParent[] = "/v2/projects/obs/locations/us-central2-b";
constexpr char kNode[] = "projects/obs/locations/us-central2-b/nodes/tpu-a";
constexpr char kMlp[] = R"({"workload": {"mlp": {"layers": 2, "batch": 32, "hidden": 16,
                                                 "steps": 5}}})";

class ObservabilityApiTest : public ::testing::Test {
 protected:
  ClientResponse Call(const std::string& method, const std::string& target,
                      const std::string& body = "") {
    Result<ClientResponse> r = client_.Request(method, target, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClientResponse{};
  }
  void CreateReady(const std::string& id) {
    ClientResponse r =
        Call("POST", std::string(kObsParent) + "/nodes?nodeId=" + id,
             R"({"acceleratorType": "v4-8", "runtimeVersion": "tpu-ubuntu2204-base"})");
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_FALSE(WaitOperation(client_, r.Json()["name"]).is_null());
  }
  // Submits and long-polls until terminal; returns the job's name.
  std::string RunJob(const std::string& node, const std::string& id, const std::string& body) {
    ClientResponse r =
        Call("POST", std::string(kObsParent) + "/nodes/" + node + "/jobs?jobId=" + id, body);
    EXPECT_EQ(r.status, 200) << r.body;
    const std::string name = r.Json().value("name", "");
    json job;
    EXPECT_TRUE(WaitFor([&] {
      job = Call("GET", "/v2/" + name + ":wait?timeout=5s").Json();
      return job.value("state", "") != "QUEUED" && job.value("state", "") != "RUNNING";
    }));
    EXPECT_EQ(job.value("state", ""), "SUCCEEDED") << job.dump();
    return name;
  }
  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  // The sampler's clock: the wall clock plus an offset a test advances between samples.
  std::atomic<int64_t> clock_offset_ms_{0};
  ApiServer server_{{.provisioning_delay_ms = 0, .transition_delay_ms = 0},
                    {},
                    // Background sampling would start after a minute; the tests sample by hand.
                    {.utilization_interval_ms = 60000,
                     .now_ms = [this] { return service::NowUnixMs() + clock_offset_ms_.load(); }}};
  HttpClient client_{"127.0.0.1", server_.port(), std::chrono::seconds(30)};
};

TEST_F(ObservabilityApiTest, MetricsReportsTellCacheMissFromHit) {
  CreateReady("tpu-a");
  const std::string miss = RunJob("tpu-a", "first", kMlp);
  const std::string hit = RunJob("tpu-a", "second", kMlp);  // same graph: cached

  ClientResponse first = Call("GET", "/v2/" + miss + "/metricsReport");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.Header("content-type").rfind("text/plain", 0), 0u);
  const std::string& a = first.body;
  EXPECT_TRUE(Has(a, "Counter: MarkStep\n  Value: 5\n")) << a;
  EXPECT_TRUE(Has(a, "Counter: UncachedCompile\n  Value: 1\n")) << a;
  EXPECT_FALSE(Has(a, "CachedCompile\n")) << a;  // zero counters are not printed
  EXPECT_TRUE(Has(a, "Metric: CompileTime\n  TotalSamples: 1\n  Accumulator: ")) << a;
  EXPECT_TRUE(Has(a, "Metric: ExecuteTime\n  TotalSamples: 5\n")) << a;
  EXPECT_TRUE(Has(a, "Metric: TransferToDeviceTime\n  TotalSamples: 5\n")) << a;
  EXPECT_TRUE(Has(a, "Metric: TransferFromDeviceTime\n  TotalSamples: 5\n")) << a;
  EXPECT_TRUE(Has(a, "Metric: InboundData\n  TotalSamples: 5\n")) << a;
  EXPECT_TRUE(Has(a, "  Percentiles: 1%=")) << a;
  EXPECT_TRUE(Has(a, "; 99%=")) << a;
  // Lazy arena counters come before the runtime arena's metrics.
  EXPECT_LT(a.find("Counter: MarkStep"), a.find("Metric: CompileTime"));

  const std::string b = Call("GET", "/v2/" + hit + "/metricsReport").body;
  EXPECT_TRUE(Has(b, "Counter: CachedCompile\n  Value: 1\n")) << b;
  EXPECT_FALSE(Has(b, "CompileTime")) << b;  // a hit has no CompileTime sample
  EXPECT_FALSE(Has(b, "UncachedCompile")) << b;
  EXPECT_TRUE(Has(b, "Metric: ExecuteTime\n  TotalSamples: 5\n")) << b;

  const std::string node = Call("GET", std::string(kObsParent) + "/nodes/tpu-a/metricsReport").body;
  EXPECT_TRUE(Has(node, "Counter: CachedCompile\n  Value: 1\n")) << node;
  EXPECT_TRUE(Has(node, "Counter: MarkStep\n  Value: 10\n")) << node;
  EXPECT_TRUE(Has(node, "Counter: UncachedCompile\n  Value: 1\n")) << node;
  EXPECT_TRUE(Has(node, "Metric: CompileTime\n  TotalSamples: 1\n")) << node;
  EXPECT_TRUE(Has(node, "Metric: ExecuteTime\n  TotalSamples: 10\n")) << node;

  ClientResponse missing =
      Call("GET", std::string(kObsParent) + "/nodes/tpu-a/jobs/nope/metricsReport");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.Json()["error"]["status"], "NOT_FOUND");
  EXPECT_EQ(Call("GET", std::string(kObsParent) + "/nodes/nope/metricsReport").status, 404);
}

// With a host-memory budget, Submit compiles the job's program to plan its peak bytes; the job's
// run then finds it in the cache. That compile served the job: its report shows the compile
// (UncachedCompile and a CompileTime sample), the next job of the same graph a CachedCompile.
TEST(ObservabilityCompileAtSubmitTest, TheJobWhoseSubmitCompiledReportsTheCompile) {
  ApiServer server({.provisioning_delay_ms = 0, .transition_delay_ms = 0}, {},
                   {.utilization_interval_ms = 0}, {.host_memory_budget_bytes = int64_t{8} << 30});
  HttpClient client("127.0.0.1", server.port(), std::chrono::seconds(30));
  auto call = [&](const std::string& method, const std::string& target,
                  const std::string& body = "") {
    Result<ClientResponse> r = client.Request(method, target, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClientResponse{};
  };
  ClientResponse created =
      call("POST", std::string(kObsParent) + "/nodes?nodeId=tpu-a",
           R"({"acceleratorType": "v4-8", "runtimeVersion": "tpu-ubuntu2204-base"})");
  ASSERT_EQ(created.status, 200) << created.body;
  ASSERT_FALSE(WaitOperation(client, created.Json()["name"]).is_null());
  auto run = [&](const std::string& id) {
    ClientResponse r =
        call("POST", std::string(kObsParent) + "/nodes/tpu-a/jobs?jobId=" + id, kMlp);
    EXPECT_EQ(r.status, 200) << r.body;
    const std::string name = r.Json().value("name", "");
    json job;
    EXPECT_TRUE(WaitFor([&] {
      job = call("GET", "/v2/" + name + ":wait?timeout=5s").Json();
      return job.value("state", "") != "QUEUED" && job.value("state", "") != "RUNNING";
    }));
    EXPECT_EQ(job.value("state", ""), "SUCCEEDED") << job.dump();
    return name;
  };
  const std::string first = run("first");
  const std::string second = run("second");

  const std::string a = call("GET", "/v2/" + first + "/metricsReport").body;
  EXPECT_NE(a.find("Counter: UncachedCompile\n  Value: 1\n"), std::string::npos) << a;
  EXPECT_EQ(a.find("Counter: CachedCompile"), std::string::npos) << a;
  EXPECT_NE(a.find("Metric: CompileTime\n  TotalSamples: 1\n  Accumulator: "), std::string::npos)
      << a;
  EXPECT_NE(a.find("Counter: CreateCompileHandles\n  Value: 1\n"), std::string::npos) << a;
  const json summary = call("GET", "/v2/" + first + "/metrics").Json()["summary"];
  EXPECT_EQ(summary.value("compileCacheHit", true), false) << summary.dump();
  EXPECT_GT(summary.value("compileSeconds", 0.0), 0.0) << summary.dump();

  const std::string b = call("GET", "/v2/" + second + "/metricsReport").body;
  EXPECT_NE(b.find("Counter: CachedCompile\n  Value: 1\n"), std::string::npos) << b;
  EXPECT_EQ(b.find("UncachedCompile"), std::string::npos) << b;
  EXPECT_EQ(b.find("CompileTime"), std::string::npos) << b;
}

TEST_F(ObservabilityApiTest, PrometheusMetricsAreValidForPromtool) {
  CreateReady("tpu-a");
  RunJob("tpu-a", "j1", kMlp);
  ASSERT_TRUE(server_.obs().utilization().SampleNow().ok());
  Call("GET", std::string(kObsParent) + "/nodes/nope");  // a 404 is counted too

  ClientResponse r = Call("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("content-type"), "text/plain; version=0.0.4");
  const std::string& m = r.body;
  EXPECT_TRUE(Has(m, "# TYPE tpuemu_http_requests_total counter\n")) << m;
  EXPECT_TRUE(Has(m,
                  "tpuemu_http_requests_total{route=\"/v2/projects/{project}/locations/"
                  "{location}/nodes/{node}/jobs\",method=\"POST\",code=\"200\"} 1\n"))
      << m;
  EXPECT_TRUE(Has(m,
                  "tpuemu_http_requests_total{route=\"/v2/projects/{project}/locations/"
                  "{location}/nodes/{node}\",method=\"GET\",code=\"404\"} 1\n"))
      << m;
  EXPECT_TRUE(Has(m, "# TYPE tpuemu_http_request_duration_seconds histogram\n")) << m;
  EXPECT_TRUE(Has(m, "le=\"+Inf\"}")) << m;
  EXPECT_TRUE(Has(m, "tpuemu_nodes{state=\"READY\",accelerator_type=\"v4-8\"} 1\n")) << m;
  EXPECT_TRUE(Has(m, "tpuemu_jobs{state=\"SUCCEEDED\"} 1\n")) << m;
  EXPECT_TRUE(Has(m, "tpuemu_job_duration_seconds_count 1\n")) << m;
  EXPECT_TRUE(Has(m, "tpuemu_compile_cache_misses_total 1\n")) << m;
  EXPECT_TRUE(Has(m, "tpuemu_compile_cache_hits_total 0\n")) << m;
  EXPECT_TRUE(Has(m, "tpuemu_engine_pool_busy_workers ")) << m;
  EXPECT_TRUE(Has(m, "tpuemu_engine_pool_queue_depth ")) << m;
  const std::string labels = std::string("{node=\"") + kNode + "\",accelerator_type=\"v4-8\"}";
  EXPECT_TRUE(Has(m, "tpuemu_accelerator_duty_cycle_ratio" + labels)) << m;
  EXPECT_TRUE(Has(m, "tpuemu_accelerator_tensorcore_utilization_ratio" + labels)) << m;
  EXPECT_TRUE(Has(m, "tpuemu_accelerator_memory_used_bytes" + labels)) << m;
  EXPECT_TRUE(Has(m, "tpuemu_accelerator_memory_total_bytes" + labels + " 137438953472\n")) << m;

  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool is not installed (Debian package prometheus)";
  }
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("tpuemu-metrics-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << m;
  const std::string command = "promtool check metrics < " + file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) output += buf;
  const int status = pclose(pipe);
  std::filesystem::remove(file);
  EXPECT_EQ(status, 0) << output << "\n" << m;
  EXPECT_EQ(output, "") << output;  // no lint findings either
}

TEST_F(ObservabilityApiTest, UtilizationHistoryForCharts) {
  CreateReady("tpu-a");
  RunJob("tpu-a", "j1", kMlp);
  ASSERT_TRUE(server_.obs().utilization().SampleNow().ok());
  clock_offset_ms_ += 1000;  // one second later
  ASSERT_TRUE(server_.obs().utilization().SampleNow().ok());

  ClientResponse r = Call("GET", std::string(kObsParent) + "/nodes/tpu-a/metrics?window=3600s");
  ASSERT_EQ(r.status, 200) << r.body;
  json body = r.Json();
  EXPECT_EQ(body["node"], kNode);
  EXPECT_EQ(body["intervalSeconds"], 60);
  ASSERT_EQ(body["samples"].size(), 2u) << body.dump();
  std::string previous_time;
  for (const json& s : body["samples"]) {
    EXPECT_EQ(s.size(), 6u) << s.dump();
    EXPECT_GE(s["dutyCycle"].get<double>(), 0);
    EXPECT_LE(s["dutyCycle"].get<double>(), 1);
    EXPECT_LE(s["tensorcoreUtilization"].get<double>(), s["dutyCycle"].get<double>());
    EXPECT_LE(s["mxuUtilization"].get<double>(), s["tensorcoreUtilization"].get<double>());
    EXPECT_EQ(s["hbmUsedBytes"], 0);  // idle when sampled
    EXPECT_EQ(s["hbmTotalBytes"], int64_t{4} * 32 << 30);
    EXPECT_LE(previous_time, s["time"].get<std::string>());  // oldest first
    previous_time = s["time"];
  }
  EXPECT_EQ(body["samples"][1]["dutyCycle"], 0);  // nothing ran in the second interval

  ClientResponse bad = Call("GET", std::string(kObsParent) + "/nodes/tpu-a/metrics?window=soon");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_TRUE(Has(bad.Json()["error"]["message"], "window")) << bad.body;
  EXPECT_EQ(Call("GET", std::string(kObsParent) + "/nodes/tpu-a/metrics?window=0s").status, 400);
  EXPECT_EQ(Call("GET", std::string(kObsParent) + "/nodes/nope/metrics").status, 404);
}

TEST_F(ObservabilityApiTest, EventsFeedLongPollsAndReportsDeletes) {
  const std::string events = "/v2/projects/obs/events";
  CreateReady("tpu-a");
  json first;
  ASSERT_TRUE(WaitFor([&] {
    first = Call("GET", events + "?since=0").Json();
    return first["events"].size() >= 2;
  }));
  ASSERT_EQ(first["events"].size(), 2u) << first.dump();
  EXPECT_EQ(first["events"][0]["kind"], "node");
  EXPECT_EQ(first["events"][0]["resource"], kNode);
  EXPECT_EQ(first["events"][0]["zone"], "us-central2-b");
  EXPECT_EQ(first["events"][0]["state"], "CREATING");
  EXPECT_FALSE(first["events"][0].contains("previousState"));
  EXPECT_EQ(first["events"][1]["state"], "READY");
  EXPECT_EQ(first["events"][1]["previousState"], "CREATING");
  EXPECT_EQ(first["events"][1]["message"], "node tpu-a CREATING -> READY");
  const int64_t since = first["nextSince"];
  EXPECT_EQ(since, first["events"][1]["seq"]);

  // A long-poll parked on an empty feed is answered by the next event.
  json polled;
  std::thread poller([&] {
    HttpClient other("127.0.0.1", server_.port(), std::chrono::seconds(60));
    Result<ClientResponse> r =
        other.Request("GET", events + "?since=" + std::to_string(since) + "&timeout=30s");
    if (r.ok()) polled = r->Json();
  });
  const std::string job = RunJob("tpu-a", "j1", kMlp);
  poller.join();
  ASSERT_GE(polled["events"].size(), 1u) << polled.dump();
  EXPECT_EQ(polled["events"][0]["kind"], "job");
  EXPECT_EQ(polled["events"][0]["resource"], job);
  EXPECT_EQ(polled["events"][0]["state"], "QUEUED");
  EXPECT_FALSE(polled["events"][0].contains("previousState"));

  // The job's whole life, in order.
  json all;
  ASSERT_TRUE(WaitFor([&] {
    all = Call("GET", events + "?since=" + std::to_string(since)).Json();
    return all["events"].size() >= 3;
  }));
  ASSERT_EQ(all["events"].size(), 3u) << all.dump();
  EXPECT_EQ(all["events"][1]["state"], "RUNNING");
  EXPECT_EQ(all["events"][2]["state"], "SUCCEEDED");
  EXPECT_EQ(all["events"][2]["previousState"], "RUNNING");

  // pageSize pages; nothing new past the end: a short long-poll times out with no events.
  json page = Call("GET", events + "?since=0&pageSize=2").Json();
  ASSERT_EQ(page["events"].size(), 2u);
  EXPECT_EQ(page["nextSince"], page["events"][1]["seq"]);
  const int64_t end = all["nextSince"];
  json quiet = Call("GET", events + "?since=" + std::to_string(end) + "&timeout=0.2s").Json();
  EXPECT_TRUE(quiet["events"].empty()) << quiet.dump();
  EXPECT_EQ(quiet["nextSince"], end);

  // Deleting the node is an event too.
  ClientResponse del = Call("DELETE", std::string(kObsParent) + "/nodes/tpu-a");
  ASSERT_EQ(del.status, 200) << del.body;
  json deleted;
  ASSERT_TRUE(WaitFor([&] {
    deleted = Call("GET", events + "?since=" + std::to_string(end) + "&timeout=5s").Json();
    return !deleted["events"].empty() && deleted["events"].back()["state"] == "DELETED";
  }));
  EXPECT_EQ(deleted["events"].back()["previousState"], "DELETING");

  for (const char* bad :
       {"?since=-1", "?since=x", "?timeout=61s", "?timeout=soon", "?pageSize=-2"}) {
    ClientResponse r = Call("GET", events + bad);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
  }
  EXPECT_TRUE(Has(Call("GET", events + "?timeout=61s").Json()["error"]["message"], "timeout"));
  EXPECT_TRUE(Has(Call("GET", events + "?since=x").Json()["error"]["message"], "since"));
  EXPECT_TRUE(Call("GET", "/v2/projects/other/events").Json()["events"].empty());
}

TEST_F(ObservabilityApiTest, ResetWipesEventsAndUtilizationHistory) {
  CreateReady("tpu-a");
  ASSERT_TRUE(server_.obs().utilization().SampleNow().ok());
  ASSERT_EQ(Call("GET", std::string(kObsParent) + "/nodes/tpu-a/metrics").Json()["samples"].size(),
            1u);
  server_.obs().events().Flush();
  ASSERT_EQ(Call("POST", "/_emulator/reset").status, 200);
  EXPECT_TRUE(Call("GET", "/v2/projects/obs/events?since=0").Json()["events"].empty());
  EXPECT_EQ(Call("GET", std::string(kObsParent) + "/nodes/tpu-a/metrics").status, 404);
  EXPECT_EQ(Call("GET", std::string(kObsParent) + "/nodes/tpu-a/metricsReport").status, 404);
}

// Issue 26: with auth on, GET /metrics names no node (no project) unless the token is granted
// every project; a project's per-node series are at /v2/projects/P/metrics behind the API's rules.
TEST(ObservabilityAuthTest, MetricsNameNodesOnlyToCallersGrantedTheirProject) {
  daemon::AppOptions options{.nodes = {.provisioning_delay_ms = 0, .transition_delay_ms = 0},
                             .observability = {.utilization_interval_ms = 0},
                             .auth = api::AuthPolicy::Parse(R"({"tokens": [
        {"token": "pa-token", "projects": ["pa"], "role": "editor"},
        {"token": "pb-token", "projects": ["pb"], "role": "viewer"},
        {"token": "admin-token", "projects": ["*"], "role": "editor"}]})")
                                         .value()};
  ApiServer server(std::move(options));
  HttpClient client("127.0.0.1", server.port());
  auto call = [&](const std::string& target, const std::string& token,
                  const std::string& method = "GET", const std::string& body = "") {
    std::map<std::string, std::string> headers;
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    Result<ClientResponse> r = client.Request(method, target, body, headers);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClientResponse{};
  };
  for (const std::string project : {"pa", "pb"}) {
    ClientResponse r = call("/v2/projects/" + project + "/locations/us-central2-b/nodes?nodeId=n1",
                            "admin-token", "POST",
                            R"({"acceleratorType": "v4-8", "runtimeVersion": )"
                            R"("tpu-ubuntu2204-base"})");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  ASSERT_TRUE(WaitFor([&] {
    for (const std::string project : {"pa", "pb"}) {
      Result<service::Node> n = server.nodes().Get({project, "us-central2-b", "n1"});
      if (!n.ok() || n->state != service::NodeState::kReady) return false;
    }
    return true;
  }));
  ASSERT_TRUE(server.obs().utilization().SampleNow().ok());
  const std::string pa = "node=\"projects/pa/locations/us-central2-b/nodes/n1\"";
  const std::string pb = "node=\"projects/pb/locations/us-central2-b/nodes/n1\"";
  auto has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };

  for (const std::string token : {"", "pa-token", "nope"}) {
    SCOPED_TRACE("token '" + token + "'");
    ClientResponse open = call("/metrics", token);
    ASSERT_EQ(open.status, 200) << open.body;
    EXPECT_TRUE(has(open.body, "tpuemu_nodes{state=\"READY\",accelerator_type=\"v4-8\"} 2\n"))
        << open.body;
    EXPECT_FALSE(has(open.body, "node=")) << open.body;
    EXPECT_FALSE(has(open.body, "projects/pa") || has(open.body, "projects/pb")) << open.body;
  }
  ClientResponse all = call("/metrics", "admin-token");
  ASSERT_EQ(all.status, 200);
  EXPECT_TRUE(has(all.body, "tpuemu_accelerator_duty_cycle_ratio{" + pa)) << all.body;
  EXPECT_TRUE(has(all.body, "tpuemu_accelerator_duty_cycle_ratio{" + pb)) << all.body;

  ClientResponse mine = call("/v2/projects/pa/metrics", "pa-token");
  ASSERT_EQ(mine.status, 200) << mine.body;
  EXPECT_EQ(mine.Header("content-type"), "text/plain; version=0.0.4");
  EXPECT_TRUE(has(mine.body, "tpuemu_accelerator_memory_total_bytes{" + pa)) << mine.body;
  EXPECT_FALSE(has(mine.body, pb)) << mine.body;
  EXPECT_FALSE(has(mine.body, "tpuemu_nodes{")) << "aggregates stay on /metrics";
  EXPECT_EQ(call("/v2/projects/pa/metrics", "").status, 401);
  ClientResponse other = call("/v2/projects/pb/metrics", "pa-token");
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(other.Json()["error"]["status"], "PERMISSION_DENIED");
  ClientResponse theirs = call("/v2/projects/pb/metrics", "pb-token");
  EXPECT_TRUE(has(theirs.body, pb) && !has(theirs.body, pa)) << theirs.body;
  EXPECT_TRUE(has(call("/v2/projects/pb/metrics", "admin-token").body, pb));
}

}  // namespace
}  // namespace tpuemu::testing
