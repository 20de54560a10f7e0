// bench_job_scaling: how a training job's host step time scales with the cores it asks for,
// through a real tpuemud and its HTTP API, as a user sees it (issue 27 item 2).
//
// Starts tpuemud (--db :memory:, no delays, no worker sandboxes), creates a v4-32 node (32
// TensorCores), and for each workload and each core count C = 1, 2, 4, … up to the machine's
// hardware threads submits one job {"workload": …, "cores": C, "steps": S}: C data-parallel
// shards of batch / C rows each, on C host threads. Reads the job's per-step `hostSeconds`
// (GET …/metrics) and prints the best step (after the first, which warms the caches), its
// speed-up over C = 1, and the parallel efficiency. The work per step is the same at every C
// (the batch is split, not grown), so the speed-up is what the cores buy.
// Workloads (the shapes, scaled to finish in about a minute on 2 cores):
//   mlp          4 layers x 1024, batch 4096;
//   transformer  2 layers, dModel 256, 4 heads, seqLen 128, batch 32;
//   cnn          32 channels, batch 256.
// Target (issue 27): at C = 2, mlp and transformer >= 1.9x.
// Usage: bench_job_scaling [steps=4]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cpu_model.h"
#include "bench/workloads/bench_daemon.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"

namespace {

using nlohmann::json;
using tpuemu::testing::DaemonProcess;
using tpuemu::testing::HttpClient;

struct BenchWorkload {
  std::string name;
  json workload;
  bool has_target;
};

// Best host seconds of the steps after the first, or a negative number when the job failed.
double BestStepSeconds(HttpClient& client, const std::string& jobs, const json& workload, int cores,
                       int steps) {
  json body = {{"workload", workload}, {"cores", cores}, {"steps", steps}};
  auto submitted = client.Request("POST", jobs, body.dump());
  if (!submitted.ok() || submitted->status != 200) {
    std::fprintf(stderr, "submit failed: %s\n",
                 submitted.ok() ? submitted->body.c_str() : submitted.status().ToString().c_str());
    return -1;
  }
  const std::string name = submitted->Json()["name"];
  for (;;) {
    auto waited = client.Request("GET", "/v2/" + name + ":wait?timeout=600s");
    if (!waited.ok()) {
      std::fprintf(stderr, "wait for %s: %s\n", name.c_str(), waited.status().ToString().c_str());
      return -1;
    }
    const std::string state = waited->Json().value("state", "");
    if (state == "SUCCEEDED") break;
    if (state != "QUEUED" && state != "RUNNING") {
      std::fprintf(stderr, "job %s: %s\n", state.c_str(), waited->body.c_str());
      return -1;
    }
  }
  auto metrics = client.Request("GET", "/v2/" + name + "/metrics");
  if (!metrics.ok() || metrics->status != 200) {
    std::fprintf(stderr, "metrics of %s: %s\n", name.c_str(),
                 metrics.ok() ? metrics->body.c_str() : metrics.status().ToString().c_str());
    return -1;
  }
  double best = -1;
  const json report = metrics->Json();
  for (const json& step : report["steps"]) {
    if (step.value("step", 0) == 0 && steps > 1) continue;  // warm-up
    const double s = step.value("hostSeconds", 0.0);
    best = best < 0 ? s : std::min(best, s);
  }
  if (best <= 0) std::fprintf(stderr, "no step of %s: %s\n", name.c_str(), metrics->body.c_str());
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::max(2, std::atoi(argv[1])) : 4;
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<int> cores;
  for (int c = 1; c < hardware; c *= 2) cores.push_back(c);
  cores.push_back(hardware);

  DaemonProcess daemon;
  if (!tpuemu::bench::StartBenchDaemon(daemon)) return 1;
  HttpClient client("127.0.0.1", daemon.port(), std::chrono::seconds(660));
  const std::string node = tpuemu::bench::CreateReadyNode(client, "scaling");
  if (node.empty()) return 1;

  const std::vector<BenchWorkload> workloads = {
      {"mlp 4x1024, batch 4096",
       {{"mlp", {{"layers", 4}, {"hidden", 1024}, {"batch", 4096}}}},
       true},
      {"transformer 2x256, seq 128, batch 32",
       {{"transformer",
         {{"layers", 2}, {"dModel", 256}, {"heads", 4}, {"seqLen", 128}, {"batch", 32}}}},
       true},
      {"cnn 32 channels, batch 256", {{"cnn", {{"channels", 32}, {"batch", 256}}}}, false},
  };
  std::printf("CPU: %s, %d hardware threads\n", tpuemu::bench::CpuModel().c_str(), hardware);
  std::printf("best step host seconds of %d steps (the first one not counted), per job's cores\n",
              steps);
  bool all_met = true;
  for (const BenchWorkload& w : workloads) {
    double one = 0;
    for (int c : cores) {
      const double s = BestStepSeconds(client, node + "/jobs", w.workload, c, steps);
      if (s <= 0) return 2;
      if (c == 1) one = s;
      const double speedup = one / s;
      const bool target = w.has_target && c == 2;
      if (target && speedup < 1.9) all_met = false;
      std::printf("  %-38s cores %-3d %8.3f s  %5.2fx  efficiency %3.0f%%%s\n", w.name.c_str(), c,
                  s, speedup, 100.0 * speedup / c,
                  target
                      ? (speedup >= 1.9 ? "  (target >= 1.9x: met)" : "  (target >= 1.9x: MISSED)")
                      : "");
      std::fflush(stdout);
    }
  }
  std::printf("%s\n", all_met ? "all targets met" : "SOME TARGETS MISSED");
  daemon.Kill(SIGTERM);
  return 0;
}
