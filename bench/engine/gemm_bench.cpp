// GEMM throughput: the engine's matmul against the best raw library GEMM this machine has,
// measured in the same run, with one thread and with two.
//
// Per square size N (1024, 2048 by default; pass the sizes as arguments) and thread count T:
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
// all alike) after one untimed warm-up; the best wall time is kept.
// Usage: bench_engine_gemm [reps=3] [N...]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/gemm.h"
#include "engine/gemm_pass.h"
#include "engine/numerics.h"
#include "engine/pool.h"

#ifdef TPUEMU_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
extern "C" void omp_set_num_threads(int num_threads);
#endif

namespace tpuemu::engine {
namespace {

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

double Seconds(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Operands {
  std::vector<float> a, b, c;
  std::vector<Bf16Bits> a_bits, b_bits;
};

Operands MakeOperands(int64_t n) {
  Operands op;
  const auto count = static_cast<std::size_t>(n * n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  op.a.resize(count);
  op.b.resize(count);
  for (float& x : op.a) x = dist(rng);
  for (float& x : op.b) x = dist(rng);
  op.c.resize(count);
  op.a_bits.resize(count);
  op.b_bits.resize(count);
  RoundToBf16Bits(op.a.data(), op.a_bits.data(), count);
  RoundToBf16Bits(op.b.data(), op.b_bits.data(), count);
  return op;
}

void RawEigen(Operands& op, int64_t n) {
  PassArgs args;
  args.a = {op.a.data(), n, false, 0};
  args.b = {op.b.data(), n, false, 0};
  args.c = op.c.data();
  args.ldc = n;
  args.m = args.n = args.k = n;
  eigen_gemm::Pass(args);
}

#ifdef TPUEMU_HAVE_ONEDNN
void RawOneDnnF32(Operands& op, int64_t n, int threads) {
  omp_set_num_threads(threads);
  dnnl_sgemm('N', 'N', n, n, n, 1.0f, op.a.data(), n, op.b.data(), n, 0.0f, op.c.data(), n);
}

// A bf16 matmul primitive for one size, built once.
class RawOneDnnBf16 {
 public:
  RawOneDnnBf16(Operands& op, int64_t n) : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dnnl::memory;
    memory::desc in_md({n, n}, memory::data_type::bf16, memory::format_tag::ab);
    memory::desc out_md({n, n}, memory::data_type::f32, memory::format_tag::ab);
    matmul_ = dnnl::matmul(
        dnnl::matmul::primitive_desc(dnnl::matmul::desc(in_md, in_md, out_md), engine_));
    a_ = memory(in_md, engine_, op.a_bits.data());
    b_ = memory(in_md, engine_, op.b_bits.data());
    c_ = memory(out_md, engine_, op.c.data());
  }
  void Run(int threads) {
    omp_set_num_threads(threads);
    matmul_.execute(stream_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul matmul_;
  dnnl::memory a_, b_, c_;
};
#endif

void EngineGemm(Operands& op, int64_t n, Precision precision, Pool* pool) {
  GemmProblem p;
  p.m = p.n = p.k = n;
  p.a.data = op.a.data();
  p.b.data = op.b.data();
  p.c = op.c.data();
  ParallelContext ctx;
  ctx.pool = pool;
  RunGemm(p, precision, ctx);
}

int Run(int reps, const std::vector<int64_t>& sizes) {
  std::printf("CPU: %s\nengine GEMM kernel: %s\n", CpuModel().c_str(), GemmKernelName().c_str());
  std::printf("best wall time of %d interleaved runs; GFLOPS = 2·N³·passes / time\n\n", reps);
  Pool pool(1);  // + the calling thread = 2 threads
  bool all_ok = true;
  for (int threads : {1, 2}) {
    for (int64_t n : sizes) {
      Operands op = MakeOperands(n);
      std::map<std::string, std::function<void()>> raw;
#ifdef TPUEMU_HAVE_ONEDNN
      std::unique_ptr<RawOneDnnBf16> bf16;
      if (OneDnnAvailable()) {
        bf16 = std::make_unique<RawOneDnnBf16>(op, n);
        raw["raw_onednn_bf16"] = [&] { bf16->Run(threads); };
      }
      raw["raw_onednn_f32"] = [&] { RawOneDnnF32(op, n, threads); };
      omp_set_num_threads(1);
#endif
      if (threads == 1) raw["raw_eigen_f32"] = [&] { RawEigen(op, n); };
      Pool* engine_pool = threads == 2 ? &pool : nullptr;
      std::map<std::string, std::function<void()>> engine = {
          {"engine_default", [&] { EngineGemm(op, n, Precision::kDefault, engine_pool); }},
          {"engine_highest", [&] { EngineGemm(op, n, Precision::kHighest, engine_pool); }}};
      std::map<std::string, double> best;
      for (int r = -1; r < reps; ++r) {  // r = -1: warm-up (primitives, page faults)
        for (auto* group : {&raw, &engine}) {
          for (auto& [name, fn] : *group) {
            const double t = Seconds(fn);
#ifdef TPUEMU_HAVE_ONEDNN
            omp_set_num_threads(1);  // the engine runs OpenMP single-threaded per caller
#endif
            if (r >= 0) best[name] = best.count(name) ? std::min(best[name], t) : t;
          }
        }
      }
      const double flops = 2.0 * n * n * n;
      std::string best_raw;
      for (auto& [name, fn] : raw) {
        std::printf("T=%d N=%-5lld %-16s %8.1f ms %7.1f GFLOPS\n", threads,
                    static_cast<long long>(n), name.c_str(), best[name] * 1e3,
                    flops / best[name] * 1e-9);
        if (best_raw.empty() || best[name] < best[best_raw]) best_raw = name;
      }
      for (const auto& [name, passes] :
           std::vector<std::pair<std::string, int>>{{"engine_default", 1}, {"engine_highest", 6}}) {
        const double ratio = passes * best[best_raw] / best[name];
        all_ok = all_ok && ratio >= 0.85;
        std::printf("T=%d N=%-5lld %-16s %8.1f ms %7.1f GFLOPS  ratio to %d x %s = %.2f\n", threads,
                    static_cast<long long>(n), name.c_str(), best[name] * 1e3,
                    passes * flops / best[name] * 1e-9, passes, best_raw.c_str(), ratio);
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
  std::vector<int64_t> sizes;
  for (int i = 2; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {1024, 2048};
  return tpuemu::engine::Run(reps, sizes);
}
