// GEMM throughput: engine::Matmul against the raw library GEMM it is built on, same run, one
// thread (the engine's Pool owns parallelism, so single-thread speed is what matters).
//
// Per square size N in {1024, 2048, 4096}:
//   raw_eigen_f32   plain Eigen f32 GEMM, single thread;
//   raw_onednn_bf16 one oneDNN bf16 x bf16 -> f32 matmul on pre-converted inputs (when available);
//   raw_eigen_bf16  Eigen on bf16-rounded inputs (the raw pass when oneDNN is absent);
//   matmul_default  engine::Matmul(kDefault), input rounding included;
//   matmul_highest  engine::Matmul(kHighest): splitting, 6 passes and the combine.
// Then: "ratio engine/raw = X%" = raw_time / engine_time for DEFAULT, and
// (6 x raw_pass_time) / engine_time for HIGHEST. Target >= 85%. Times are CPU time of the
// (single) calling thread: the machine is shared, and CPU time is what contention leaves intact.
#include <benchmark/benchmark.h>
#include <Eigen/Core>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/gemm.h"
#include "engine/numerics.h"

#ifdef TPUEMU_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
extern "C" void omp_set_num_threads(int num_threads);
#endif

namespace tpuemu::engine {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Operands {
  std::vector<float> a, b, c;
  std::vector<float> a_bf16, b_bf16;  // bf16-rounded, as f32
  std::vector<Bf16Bits> a_bits, b_bits;
};

const Operands& OperandsFor(int64_t n) {
  static std::map<int64_t, Operands> cache;  // main thread only
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  Operands& op = cache[n];
  const auto count = static_cast<std::size_t>(n * n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  op.a.resize(count);
  op.b.resize(count);
  for (float& x : op.a) x = dist(rng);
  for (float& x : op.b) x = dist(rng);
  op.c.resize(count);
  op.a_bf16.resize(count);
  op.b_bf16.resize(count);
  op.a_bits.resize(count);
  op.b_bits.resize(count);
  RoundToBf16(op.a.data(), op.a_bf16.data(), count);
  RoundToBf16(op.b.data(), op.b_bf16.data(), count);
  RoundToBf16Bits(op.a.data(), op.a_bits.data(), count);
  RoundToBf16Bits(op.b.data(), op.b_bits.data(), count);
  return op;
}

void SetFlops(benchmark::State& state, int64_t n, int passes) {
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * passes * n * n * n * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void RawEigen(benchmark::State& state, int64_t n, bool bf16_inputs) {
  const Operands& op = OperandsFor(n);
  Eigen::Map<const RowMajor> a(bf16_inputs ? op.a_bf16.data() : op.a.data(), n, n);
  Eigen::Map<const RowMajor> b(bf16_inputs ? op.b_bf16.data() : op.b.data(), n, n);
  std::vector<float> c(static_cast<std::size_t>(n * n));
  Eigen::Map<RowMajor> cm(c.data(), n, n);
  for (auto _ : state) {
    cm.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetFlops(state, n, 1);
}

#ifdef TPUEMU_HAVE_ONEDNN
void RawOneDnn(benchmark::State& state, int64_t n) {
  const Operands& op = OperandsFor(n);
  using dnnl::memory;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  memory::desc in_md({n, n}, memory::data_type::bf16, memory::format_tag::ab);
  memory::desc out_md({n, n}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(in_md, in_md, out_md), engine);
  dnnl::matmul matmul(pd);
  std::vector<float> c(static_cast<std::size_t>(n * n));
  memory a_mem(in_md, engine, const_cast<Bf16Bits*>(op.a_bits.data()));
  memory b_mem(in_md, engine, const_cast<Bf16Bits*>(op.b_bits.data()));
  memory c_mem(out_md, engine, c.data());
  matmul.execute(stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  stream.wait();  // untimed warm-up, like EngineMatmul's
  for (auto _ : state) {
    matmul.execute(stream,
                   {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    stream.wait();
    benchmark::ClobberMemory();
  }
  SetFlops(state, n, 1);
}
#endif

void EngineMatmul(benchmark::State& state, int64_t n, Precision precision) {
  const Operands& op = OperandsFor(n);
  std::vector<float> c(static_cast<std::size_t>(n * n));
  // Untimed first call: builds the cached primitives and the thread's operand buffers, as the
  // first step of a job does; the loop measures the steady state (the raw baselines likewise
  // build their primitive outside the loop).
  Matmul(op.a.data(), op.b.data(), c.data(), n, n, n, precision);
  for (auto _ : state) {
    Matmul(op.a.data(), op.b.data(), c.data(), n, n, n, precision);
    benchmark::ClobberMemory();
  }
  SetFlops(state, n, MxuPasses(precision));
}

// Keeps each run's time per iteration so main can print the ratios after the console report.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration && run.iterations > 0) {
        seconds_[run.run_name.function_name] = run.cpu_accumulated_time / run.iterations;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double Seconds(const std::string& name) const {
    auto it = seconds_.find(name);
    return it == seconds_.end() ? 0.0 : it->second;
  }

 private:
  std::map<std::string, double> seconds_;
};

std::string Name(const char* what, int64_t n) {
  return std::string(what) + "/" + std::to_string(n);
}

}  // namespace
}  // namespace tpuemu::engine

int main(int argc, char** argv) {
  using namespace tpuemu::engine;
  Eigen::setNbThreads(1);
#ifdef TPUEMU_HAVE_ONEDNN
  omp_set_num_threads(1);  // the raw baseline runs single-threaded, like Matmul
#endif
  const bool onednn = OneDnnAvailable();
  const char* raw_pass = onednn ? "raw_onednn_bf16" : "raw_eigen_bf16";
  const int64_t sizes[] = {1024, 2048, 4096};
  for (int64_t n : sizes) {
    // 4096 costs seconds per GEMM (more on Eigen): one iteration keeps the run in minutes.
    auto limit = [n](benchmark::internal::Benchmark* b) {
      b->Unit(benchmark::kMillisecond);
      if (n >= 4096) b->Iterations(1);
    };
    limit(benchmark::RegisterBenchmark(Name("raw_eigen_f32", n).c_str(),
                                       [n](benchmark::State& s) { RawEigen(s, n, false); }));
    if (onednn) {
#ifdef TPUEMU_HAVE_ONEDNN
      limit(benchmark::RegisterBenchmark(Name("raw_onednn_bf16", n).c_str(),
                                         [n](benchmark::State& s) { RawOneDnn(s, n); }));
#endif
    } else {
      limit(benchmark::RegisterBenchmark(Name("raw_eigen_bf16", n).c_str(),
                                         [n](benchmark::State& s) { RawEigen(s, n, true); }));
    }
    limit(benchmark::RegisterBenchmark(Name("matmul_default", n).c_str(), [n](benchmark::State& s) {
      EngineMatmul(s, n, Precision::kDefault);
    }));
    limit(benchmark::RegisterBenchmark(Name("matmul_highest", n).c_str(), [n](benchmark::State& s) {
      EngineMatmul(s, n, Precision::kHighest);
    }));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::printf("\nGEMM backend: %s (raw pass = %s); target ratio >= 85%%\n",
              std::string(GemmBackendName(ResolveBackend(GemmBackend::kAuto))).c_str(), raw_pass);
  for (int64_t n : sizes) {
    const double raw = reporter.Seconds(Name(raw_pass, n));
    const double def = reporter.Seconds(Name("matmul_default", n));
    const double highest = reporter.Seconds(Name("matmul_highest", n));
    if (raw <= 0 || def <= 0 || highest <= 0) continue;  // filtered out with --benchmark_filter
    std::printf("N=%-5lld DEFAULT: ratio engine/raw = %.1f%%   (raw %.1f ms, engine %.1f ms)\n",
                static_cast<long long>(n), 100.0 * raw / def, raw * 1e3, def * 1e3);
    std::printf("N=%-5lld HIGHEST: ratio engine/raw = %.1f%%   (6 x raw %.1f ms, engine %.1f ms)\n",
                static_cast<long long>(n), 100.0 * 6 * raw / highest, 6 * raw * 1e3, highest * 1e3);
  }
  benchmark::Shutdown();
  return 0;
}
