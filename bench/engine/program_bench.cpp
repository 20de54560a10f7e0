// Engine overhead: a square matmul program as a job runs it — Compile (its price), the graph
// lowered to HLO and run on the HLO evaluator (engine/frontend/graph_program.h) — against a raw
// engine::Matmul call of the same precision, measured in the same run.
//
// Per N in {1024, 2048, 4096} and precision in {DEFAULT, HIGHEST}:
//   raw     Matmul(a, b, c, N, N, N, precision) on preallocated buffers;
//   engine  Compile(graph) + HloGraphProgram::Lower(graph) + Run(feeds {a, b}) -> output tensor,
//           no pool
//           (so both run on the calling thread and measure the same work plus the engine's own).
// Each side runs `reps` times, interleaved (raw, engine, raw, engine, ...) so that machine-wide
// contention hits both alike; the best time of each is kept. Times are CPU time of the calling
// thread (the machine is shared; CPU time is what contention leaves intact), wall time is printed
// too. "ratio engine/raw = X%" = raw_time / engine_time; the target is >= 85%.
// Usage: bench_engine_program [max_n=4096] [reps=3]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "bench/engine/raw_gemm.h"
#include "engine/frontend/compiler.h"
#include "engine/frontend/graph_program.h"
#include "engine/kernels/gemm.h"

namespace tpuemu::engine {
namespace {

struct Clock {
  double cpu_s = 0;
  double wall_s = 0;
};

Clock Now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return {static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9, wall};
}

Clock Since(const Clock& start) {
  const Clock now = Now();
  return {now.cpu_s - start.cpu_s, now.wall_s - start.wall_s};
}

Tensor RandomTensor(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  FloatBuffer v(static_cast<size_t>(n * n));
  for (auto& x : v) x = dist(rng);
  return *Tensor::FromF32(Shape{n, n}, std::move(v));
}

int Run(int64_t max_n, int reps) {
  auto slice = Slice::FromAcceleratorType("v4-8");
  if (!slice.ok()) {
    std::fprintf(stderr, "%s\n", slice.status().ToString().c_str());
    return 1;
  }
  std::printf("CPU: %s\n", bench::CpuModel().c_str());
  std::printf("GEMM backend: %s; CPU time of the calling thread, best of %d\n",
              std::string(GemmBackendName(ResolveBackend(GemmBackend::kAuto))).c_str(), reps);
  bool all_ok = true;
  for (int64_t n = 1024; n <= max_n; n *= 2) {
    std::map<std::string, Tensor> feeds;
    feeds["a"] = RandomTensor(n, 1);
    feeds["b"] = RandomTensor(n, 2);
    Graph graph("matmul");
    graph.Parameter("a", {n, n});
    graph.Parameter("b", {n, n});
    graph.Dot("c", "a", "b");
    graph.MarkOutput("c");
    std::vector<float> c(static_cast<size_t>(n * n));
    for (Precision precision : {Precision::kDefault, Precision::kHighest}) {
      CompileOptions options;
      options.precision = precision;
      Clock raw{1e30, 1e30}, engine{1e30, 1e30};
      for (int r = 0; r < reps; ++r) {
        Clock start = Now();
        Matmul(feeds["a"].f32(), feeds["b"].f32(), c.data(), n, n, n, precision);
        Clock t = Since(start);
        raw = {std::min(raw.cpu_s, t.cpu_s), std::min(raw.wall_s, t.wall_s)};

        start = Now();
        auto program = Compile(graph, *slice, options);
        if (!program.ok()) {
          std::fprintf(stderr, "%s\n", program.status().ToString().c_str());
          return 1;
        }
        auto lowered = hlo::HloGraphProgram::Lower(graph);
        if (!lowered.ok()) {
          std::fprintf(stderr, "%s\n", lowered.status().ToString().c_str());
          return 1;
        }
        const FeedView view{{"a", &feeds["a"]}, {"b", &feeds["b"]}};
        auto result = (*lowered)->Run(graph, view, precision);
        if (!result.ok()) {
          std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
          return 1;
        }
        t = Since(start);
        engine = {std::min(engine.cpu_s, t.cpu_s), std::min(engine.wall_s, t.wall_s)};
        // Same numbers as the raw call: the engine adds bookkeeping, not different math.
        if (r == 0 && !std::equal(c.begin(), c.end(), result->at("c").f32())) {
          std::printf("warning: engine result differs from raw Matmul at N=%ld\n",
                      static_cast<long>(n));
        }
      }
      const double flops = 2.0 * n * n * n;
      const double ratio = 100.0 * raw.cpu_s / engine.cpu_s;
      all_ok = all_ok && ratio >= 85.0;
      std::printf(
          "N=%-5ld %-8s raw %8.3f s (%6.1f GFLOP/s, wall %8.3f s)  engine %8.3f s (%6.1f "
          "GFLOP/s, wall %8.3f s)  ratio engine/raw = %.1f%%\n",
          static_cast<long>(n), std::string(PrecisionName(precision)).c_str(), raw.cpu_s,
          flops / raw.cpu_s * 1e-9, raw.wall_s, engine.cpu_s, flops / engine.cpu_s * 1e-9,
          engine.wall_s, ratio);
      std::fflush(stdout);
    }
  }
  std::printf("%s\n", all_ok ? "all ratios >= 85%" : "SOME RATIOS BELOW 85%");
  return 0;
}

}  // namespace
}  // namespace tpuemu::engine

int main(int argc, char** argv) {
  const int64_t max_n = argc > 1 ? std::atoll(argv[1]) : 4096;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  return tpuemu::engine::Run(max_n, std::max(reps, 1));
}
