// GEMM throughput: the engine's matmul against the best raw library GEMM this machine has,
// measured in the same run, with one thread and with two.
//
// Per size (N x N x N for 1024 and 2048 by default; pass sizes as arguments, N or MxKxN, e.g.
// 256x1024x1024, a layer of bench/workloads' mlp) and thread count T:
//   raw_onednn_bf16  one oneDNN bf16 x bf16 -> f32 matmul on pre-converted inputs (only where the
//                    CPU has AVX512-BF16 or AMX);
//   raw_onednn_f32   dnnl_sgemm on f32 inputs, T OpenMP threads;
//   raw_eigen_f32    Eigen's f32 GEMM in the best ISA variant the engine built (T = 1 only:
//                    Eigen is built without OpenMP);
//   engine DEFAULT   engine::RunGemm(kDefault) with T threads (a Pool of T - 1 workers plus the
//                    caller), input rounding included;
//   engine HIGHEST   the same at kHighest (splitting, 6 passes, the combine).
// "ratio" = best raw time / engine time, where the raw time is one pass (DEFAULT) or six passes
// (HIGHEST) of the fastest raw kernel at the same thread count. Target >= 0.85.
// Each kernel runs `reps` times interleaved with the others (contention on a shared machine hits
// all alike) after one untimed warm-up, and each raw run with T > 1 is followed by a pause
// until its OpenMP threads sleep (raw_gemm.h, LetOpenMpSettle); the best wall time and the best
// process CPU time are kept, and the ratio is printed for both (the CPU-time one is what idle cores
// would show).
//
// Usage: bench_engine_gemm [reps=3] [N | MxKxN ...]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/engine/raw_gemm.h"
#include "engine/kernels/gemm.h"
#include "engine/runtime/pool.h"

namespace tpuemu::engine {
namespace {

using bench::RawGemm;

void EngineGemm(RawGemm& op, Precision precision, Pool* pool) {
  GemmProblem p;
  p.m = op.m();
  p.k = op.k();
  p.n = op.n();
  p.a.data = op.a();
  p.b.data = op.b();
  p.c = op.c();
  ParallelContext ctx;
  ctx.pool = pool;
  RunGemm(p, precision, ctx);
}

struct Size {
  int64_t m, k, n;
  std::string Name() const {
    if (m == k && k == n) return "N=" + std::to_string(n);
    return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  }
};

// "2048" or "256x1024x1024"; nullopt for anything else.
std::optional<Size> ParseSize(const std::string& text) {
  long long m = 0, k = 0, n = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%lldx%lldx%lld%c", &m, &k, &n, &rest) == 3 && m > 0 && k > 0 &&
      n > 0) {
    return Size{m, k, n};
  }
  if (std::sscanf(text.c_str(), "%lld%c", &n, &rest) == 1 && n > 0) return Size{n, n, n};
  return std::nullopt;
}

int Run(int reps, const std::vector<Size>& sizes) {
  std::printf("CPU: %s\nengine GEMM kernel: %s\n", bench::CpuModel().c_str(),
              GemmKernelName().c_str());
  std::printf(
      "best of %d interleaved runs; GFLOPS = 2·m·k·n·passes / wall time; cpu GFLOPS = the same "
      "over process CPU time / T (what idle cores would give)\n\n",
      reps);
  Pool pool(1);  // + the calling thread = 2 threads
  bool all_ok = true;
  for (int threads : {1, 2}) {
    for (const Size& size : sizes) {
      RawGemm op(size.m, size.k, size.n);
      const std::string label = size.Name();
      std::map<std::string, std::function<void()>> raw = op.Kernels(threads);
      Pool* engine_pool = threads == 2 ? &pool : nullptr;
      std::map<std::string, std::function<void()>> engine = {
          {"engine_default", [&] { EngineGemm(op, Precision::kDefault, engine_pool); }},
          {"engine_highest", [&] { EngineGemm(op, Precision::kHighest, engine_pool); }}};
      std::map<std::string, bench::Timing> best;
      for (int r = -1; r < reps; ++r) {  // r = -1: warm-up (primitives, page faults)
        for (auto* group : {&raw, &engine}) {
          for (auto& [name, fn] : *group) {
            const bench::Timing t = bench::Measure(fn);
            if (group == &raw && threads > 1) bench::LetOpenMpSettle();
            if (r < 0) continue;
            auto it = best.find(name);
            if (it == best.end()) {
              best.emplace(name, t);
            } else {
              it->second = bench::Min(it->second, t);
            }
          }
        }
      }
      const double flops = 2.0 * static_cast<double>(size.m) * static_cast<double>(size.k) *
                           static_cast<double>(size.n);
      auto gflops = [&](const bench::Timing& t, int passes) {
        return std::pair{passes * flops / t.wall_s * 1e-9,
                         passes * flops / (t.cpu_s / threads) * 1e-9};
      };
      std::string best_raw;
      for (auto& [name, fn] : raw) {
        const auto [wall, cpu] = gflops(best[name], 1);
        std::printf("T=%d %-14s %-16s %8.1f ms %7.1f GFLOPS (cpu %6.1f)\n", threads, label.c_str(),
                    name.c_str(), best[name].wall_s * 1e3, wall, cpu);
        if (best_raw.empty() || best[name].wall_s < best[best_raw].wall_s) best_raw = name;
      }
      for (const auto& [name, passes] :
           std::vector<std::pair<std::string, int>>{{"engine_default", 1}, {"engine_highest", 6}}) {
        const auto [wall, cpu] = gflops(best[name], passes);
        const double ratio = passes * best[best_raw].wall_s / best[name].wall_s;
        const double cpu_ratio = passes * best[best_raw].cpu_s / best[name].cpu_s;
        all_ok = all_ok && ratio >= 0.85;
        std::printf(
            "T=%d %-14s %-16s %8.1f ms %7.1f GFLOPS (cpu %6.1f)  ratio to %d x %s = %.2f "
            "(cpu %.2f)\n",
            threads, label.c_str(), name.c_str(), best[name].wall_s * 1e3, wall, cpu, passes,
            best_raw.c_str(), ratio, cpu_ratio);
      }
      std::fflush(stdout);
    }
  }
  std::printf("\n%s\n", all_ok ? "all ratios >= 0.85" : "SOME RATIOS BELOW 0.85");
  return 0;
}

}  // namespace
}  // namespace tpuemu::engine

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::vector<tpuemu::engine::Size> sizes;
  for (int i = 2; i < argc; ++i) {
    const auto size = tpuemu::engine::ParseSize(argv[i]);
    if (!size) {
      std::fprintf(stderr, "bad size '%s': want N or MxKxN\n", argv[i]);
      return 2;
    }
    sizes.push_back(*size);
  }
  if (sizes.empty()) sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}};
  return tpuemu::engine::Run(reps, sizes);
}
