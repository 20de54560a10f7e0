// bench_daemon_jobs: whole jobs through a real tpuemud and its HTTP API against the best raw GEMM
// of this machine at one thread, measured in the same run (issue 44 item 4).
//
// Starts tpuemud (--db :memory:, no delays, no worker sandboxes), creates a v4-32 node, and
// submits jobs as a user does ({"workload": …, "cores": C, "steps": S}); reads each job's
// per-step `flops` and `hostSeconds` (GET …/metrics) and takes the median of the steps after the
// first (which warms the caches): the steady-state step a user sees.
// 1. At one core: host GFLOPS = step flops / median step host seconds, against the best raw
//    2048³ GEMM at one thread (bench/engine/raw_gemm.h: oneDNN bf16, oneDNN f32 or Eigen, the
//    fastest here, timed before and after the jobs, the faster kept). Targets: matmul 2048³ >=
//    0.85, transformer (2 blocks, dModel 256, seq 128, batch 8) >= 0.65, mlp (4x1024, batch 256)
//    >= 0.75. Beside it, the job's wall time outside its steps' host time, per step (building the
//    values, compiling, storing the step rows): what a user waits for beyond the steps.
// 2. The core curve C = 1, 2, … up to the machine's hardware threads (each C dividing the batch)
//    for the batch-8 transformer and the large batches (transformer 32, mlp 4096): the median
//    step, the speed-up over C = 1 (target at C = 2: >= 1.7x for all three), and from the largest C
//    the serial share (Karp-Flatt: e = (C/S - 1) / (C - 1)) and Amdahl's projection for a 16-core
//    host, capped by the shards the batch allows (a job's cores divide its batch).
// Usage: bench_daemon_jobs [steps=6]; TPUEMUD=path/to/tpuemud to run another build's daemon.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/engine/raw_gemm.h"
#include "bench/workloads/bench_daemon.h"
#include "engine/kernels/gemm.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"

namespace {

using nlohmann::json;
using tpuemu::testing::DaemonProcess;
using tpuemu::testing::HttpClient;

constexpr int kProjectedCores = 16;

struct Step {
  double flops = 0;
  double seconds = 0;  // median host seconds of the steps after the first
  // The job's wall time (startTime -> endTime) outside its steps' host time, per step: building
  // the workload's values, compiling, storing each step's row, the end's commit.
  double outside_seconds = 0;
};

// Seconds since midnight of an RFC 3339 time ("2026-12-07T23:52:14.819705Z"), or -1.
double DaySeconds(const std::string& rfc3339) {
  const size_t t = rfc3339.find('T');
  if (t == std::string::npos || rfc3339.size() < t + 9) return -1;
  return std::atoi(rfc3339.substr(t + 1, 2).c_str()) * 3600.0 +
         std::atoi(rfc3339.substr(t + 4, 2).c_str()) * 60.0 +
         std::strtod(rfc3339.substr(t + 7).c_str(), nullptr);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Submits one job and waits for it; its median steady-state step, or seconds <= 0 on a failure.
Step RunJob(HttpClient& client, const std::string& jobs, const json& workload, int cores,
            int steps) {
  json body = {{"workload", workload}, {"cores", cores}, {"steps", steps}};
  auto submitted = client.Request("POST", jobs, body.dump());
  if (!submitted.ok() || submitted->status != 200) {
    std::fprintf(stderr, "submit failed: %s\n",
                 submitted.ok() ? submitted->body.c_str() : submitted.status().ToString().c_str());
    return {};
  }
  const std::string name = submitted->Json()["name"];
  json job;
  for (;;) {
    auto waited = client.Request("GET", "/v2/" + name + ":wait?timeout=600s");
    if (!waited.ok()) {
      std::fprintf(stderr, "wait for %s: %s\n", name.c_str(), waited.status().ToString().c_str());
      return {};
    }
    job = waited->Json();
    const std::string state = job.value("state", "");
    if (state == "SUCCEEDED") break;
    if (state != "QUEUED" && state != "RUNNING") {
      std::fprintf(stderr, "job %s: %s\n", state.c_str(), waited->body.c_str());
      return {};
    }
  }
  auto metrics = client.Request("GET", "/v2/" + name + "/metrics");
  if (!metrics.ok() || metrics->status != 200) {
    std::fprintf(stderr, "metrics of %s: %s\n", name.c_str(),
                 metrics.ok() ? metrics->body.c_str() : metrics.status().ToString().c_str());
    return {};
  }
  Step out;
  std::vector<double> seconds;
  const json report = metrics->Json();
  double host_total = 0;
  for (const json& step : report["steps"]) {
    host_total += step.value("hostSeconds", 0.0);
    if (step.value("step", 0) == 0 && steps > 1) continue;  // warm-up
    seconds.push_back(step.value("hostSeconds", 0.0));
    out.flops = step.value("flops", 0.0);
  }
  if (seconds.empty()) {
    std::fprintf(stderr, "no step of %s: %s\n", name.c_str(), metrics->body.c_str());
    return {};
  }
  out.seconds = Median(seconds);
  double wall = DaySeconds(job.value("endTime", "")) - DaySeconds(job.value("startTime", ""));
  if (wall < 0) wall += 86400;  // past midnight
  out.outside_seconds = (wall - host_total) / static_cast<double>(report["steps"].size());
  return out;
}

std::string Fixed1(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// The best raw 2048³ GEMM at one thread: its kernel and GFLOPS.
std::pair<std::string, double> RawCeiling(tpuemu::bench::RawGemm& raw) {
  const auto [kernel, timing] = raw.Best(1, 5);
  tpuemu::bench::LetOpenMpSettle();
  return {kernel, 2.0 * 2048 * 2048 * 2048 / timing.wall_s * 1e-9};
}

struct RatioJob {
  std::string name;
  json workload;
  double target;
};

struct CurveJob {
  std::string name;
  json workload;
  int batch;
};

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::max(2, std::atoi(argv[1])) : 6;
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));

  DaemonProcess daemon;
  // TPUEMUD=path runs another build's tpuemud (the commit before a change, for an A/B).
  std::string binary = TPUEMUD_BIN;
  if (const char* bin = std::getenv("TPUEMUD"); bin != nullptr && *bin != 0) binary = bin;
  daemon.SetBinary(binary);
  if (!tpuemu::bench::StartBenchDaemon(daemon)) return 1;
  HttpClient client("127.0.0.1", daemon.port(), std::chrono::seconds(660));
  const std::string node = tpuemu::bench::CreateReadyNode(client, "jobs");
  if (node.empty()) return 1;
  const std::string jobs = node + "/jobs";

  std::printf("CPU: %s, %d hardware threads\nengine GEMM kernel: %s\n",
              tpuemu::bench::CpuModel().c_str(), hardware,
              tpuemu::engine::GemmKernelName().c_str());
  std::printf("tpuemud: %s\n", binary.c_str());
  std::printf(
      "jobs through tpuemud over HTTP; median host seconds of %d steps (the first not "
      "counted), from each job's /metrics\n\n",
      steps - 1);
  tpuemu::bench::RawGemm raw(2048);
  auto [kernel, raw_before] = RawCeiling(raw);
  std::printf("best raw 2048^3 GEMM at 1 thread: %s %.1f GFLOPS\n", kernel.c_str(), raw_before);

  const json transformer8 = {
      {"transformer",
       {{"layers", 2}, {"dModel", 256}, {"heads", 4}, {"seqLen", 128}, {"batch", 8}}}};
  const std::vector<RatioJob> ratio_jobs = {
      {"matmul 2048^3", {{"matmul", {{"m", 2048}, {"k", 2048}, {"n", 2048}}}}, 0.85},
      {"transformer 2x256, seq 128, batch 8", transformer8, 0.65},
      {"mlp 4x1024, batch 256", {{"mlp", {{"layers", 4}, {"hidden", 1024}, {"batch", 256}}}}, 0.75},
  };
  std::vector<Step> measured;
  for (const RatioJob& j : ratio_jobs) {
    measured.push_back(RunJob(client, jobs, j.workload, 1, steps));
    if (measured.back().seconds <= 0) return 2;
  }
  // The ceiling again after the jobs: the faster of the two (the machine's best at one thread).
  const auto [kernel_after, raw_after] = RawCeiling(raw);
  const double ceiling = std::max(raw_before, raw_after);
  if (raw_after > raw_before) kernel = kernel_after;
  std::printf("  (again after the jobs: %s %.1f GFLOPS; ceiling %.1f)\n", kernel_after.c_str(),
              raw_after, ceiling);
  bool all_met = true;
  for (size_t i = 0; i < ratio_jobs.size(); ++i) {
    const double gflops = measured[i].flops / measured[i].seconds * 1e-9;
    const double ratio = gflops / ceiling;
    const bool met = ratio >= ratio_jobs[i].target;
    all_met = all_met && met;
    std::printf("  cores 1  %-38s %8.2f ms/step %7.1f GFLOPS  ratio %.2f (target >= %.2f: %s)\n",
                ratio_jobs[i].name.c_str(), measured[i].seconds * 1e3, gflops, ratio,
                ratio_jobs[i].target, met ? "met" : "MISSED");
    std::printf(
        "           outside the steps' host time: %.2f ms per step (values, compile, rows)\n",
        measured[i].outside_seconds * 1e3);
  }

  const std::vector<CurveJob> curve_jobs = {
      {"transformer 2x256, seq 128, batch 8", transformer8, 8},
      {"transformer 2x256, seq 128, batch 32",
       {{"transformer",
         {{"layers", 2}, {"dModel", 256}, {"heads", 4}, {"seqLen", 128}, {"batch", 32}}}},
       32},
      {"mlp 4x1024, batch 4096",
       {{"mlp", {{"layers", 4}, {"hidden", 1024}, {"batch", 4096}}}},
       4096},
  };
  std::printf(
      "\nmedian step per job's cores (its data-parallel shards, on as many host threads); "
      "target at cores 2: >= 1.70x\n");
  for (const CurveJob& j : curve_jobs) {
    double one = 0, speedup_at_max = 1;
    int max_cores = 1;
    for (int c = 1; c <= hardware; ++c) {
      if (j.batch % c != 0) continue;
      const Step s = RunJob(client, jobs, j.workload, c, steps);
      if (s.seconds <= 0) return 2;
      if (c == 1) one = s.seconds;
      const double speedup = one / s.seconds;
      max_cores = c;
      speedup_at_max = speedup;
      const bool target = c == 2;
      all_met = all_met && (!target || speedup >= 1.7);
      std::printf(
          "  cores %-3d %-38s %8.2f ms/step  %5.2fx  efficiency %3.0f%%%s\n", c, j.name.c_str(),
          s.seconds * 1e3, speedup, 100.0 * speedup / c,
          target ? (speedup >= 1.7 ? "  (target >= 1.70x: met)" : "  (target >= 1.70x: MISSED)")
                 : "");
      std::fflush(stdout);
    }
    if (max_cores < 2) continue;
    // Karp-Flatt: the serial share that explains the speed-up at the largest C, then Amdahl.
    const double serial =
        std::clamp((max_cores / speedup_at_max - 1.0) / (max_cores - 1.0), 0.0, 1.0);
    int usable = 1;  // the most cores <= 16 a job of this batch may ask for
    for (int c = 1; c <= kProjectedCores; ++c) {
      if (j.batch % c == 0) usable = c;
    }
    const double projected = 1.0 / (serial + (1.0 - serial) / usable);
    std::string bounds = serial > 0 ? "; Amdahl's bound " + Fixed1(1.0 / serial) + "x" : "";
    if (usable < kProjectedCores) {
      bounds += "; batch " + std::to_string(j.batch) + " allows " + std::to_string(usable) +
                " of " + std::to_string(kProjectedCores) + " cores";
    }
    std::printf("    projection: serial share %.1f%% (from %d cores) -> at %d cores %.1fx%s\n",
                100.0 * serial, max_cores, usable, projected, bounds.c_str());
  }
  std::printf("\n%s\n", all_met ? "all targets met" : "SOME TARGETS MISSED");
  daemon.Kill(SIGTERM);
  return 0;
}
