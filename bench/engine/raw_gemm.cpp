#include "bench/engine/raw_gemm.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>

#include "engine/gemm.h"
#include "engine/gemm_pass.h"

#ifdef TPUEMU_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
extern "C" void omp_set_num_threads(int num_threads);
#endif

namespace tpuemu::bench {

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

#ifdef TPUEMU_HAVE_ONEDNN
// A bf16 x bf16 -> f32 matmul primitive for one size, built once.
struct RawGemm::OneDnnBf16 {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul matmul;
  dnnl::memory a, b, c;

  OneDnnBf16(int64_t n, engine::Bf16Bits* a_bits, engine::Bf16Bits* b_bits, float* out) {
    using dnnl::memory;
    memory::desc in_md({n, n}, memory::data_type::bf16, memory::format_tag::ab);
    memory::desc out_md({n, n}, memory::data_type::f32, memory::format_tag::ab);
    matmul = dnnl::matmul(
        dnnl::matmul::primitive_desc(dnnl::matmul::desc(in_md, in_md, out_md), engine));
    a = memory(in_md, engine, a_bits);
    b = memory(in_md, engine, b_bits);
    c = memory(out_md, engine, out);
  }
  void Run() {
    matmul.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    stream.wait();
  }
};
#else
struct RawGemm::OneDnnBf16 {};
#endif

RawGemm::RawGemm(int64_t n) : n_(n) {
  const auto count = static_cast<std::size_t>(n * n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  a_.resize(count);
  b_.resize(count);
  for (float& x : a_) x = dist(rng);
  for (float& x : b_) x = dist(rng);
  c_.resize(count);
  a_bits_.resize(count);
  b_bits_.resize(count);
  engine::RoundToBf16Bits(a_.data(), a_bits_.data(), count);
  engine::RoundToBf16Bits(b_.data(), b_bits_.data(), count);
#ifdef TPUEMU_HAVE_ONEDNN
  if (engine::OneDnnAvailable()) {
    bf16_ = std::make_unique<OneDnnBf16>(n, a_bits_.data(), b_bits_.data(), c_.data());
  }
#endif
}

RawGemm::~RawGemm() = default;

std::map<std::string, std::function<void()>> RawGemm::Kernels(int threads) {
  std::map<std::string, std::function<void()>> kernels;
#ifdef TPUEMU_HAVE_ONEDNN
  // Each kernel sets its OpenMP team and restores one thread (the engine's setting) after.
  if (bf16_) {
    kernels["raw_onednn_bf16"] = [this, threads] {
      omp_set_num_threads(threads);
      bf16_->Run();
      omp_set_num_threads(1);
    };
  }
  kernels["raw_onednn_f32"] = [this, threads] {
    omp_set_num_threads(threads);
    dnnl_sgemm('N', 'N', n_, n_, n_, 1.0f, a_.data(), n_, b_.data(), n_, 0.0f, c_.data(), n_);
    omp_set_num_threads(1);
  };
#endif
  if (threads == 1) {
    kernels["raw_eigen_f32"] = [this] {
      engine::PassArgs args;
      args.a = {a_.data(), n_, false, 0};
      args.b = {b_.data(), n_, false, 0};
      args.c = c_.data();
      args.ldc = n_;
      args.m = args.n = args.k = n_;
      engine::eigen_gemm::Pass(args);
    };
  }
  return kernels;
}

std::pair<std::string, double> RawGemm::Best(int threads, int reps) {
  std::pair<std::string, double> best{"", 0};
  for (auto& [name, fn] : Kernels(threads)) {
    fn();  // warm-up
    double t = Seconds(fn);
    for (int r = 1; r < reps; ++r) t = std::min(t, Seconds(fn));
    if (best.first.empty() || t < best.second) best = {name, t};
  }
  return best;
}

}  // namespace tpuemu::bench
