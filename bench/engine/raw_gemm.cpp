#include "bench/engine/raw_gemm.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include <time.h>

#include "engine/kernels/gemm.h"
#include "engine/kernels/gemm_pass.h"

#ifdef TPUEMU_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
extern "C" void omp_set_num_threads(int num_threads);
#endif

namespace tpuemu::bench {

namespace {
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

Timing Measure(const std::function<void()>& fn) {
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
          ProcessCpuSeconds() - cpu0};
}

Timing Min(const Timing& a, const Timing& b) {
  return {std::min(a.wall_s, b.wall_s), std::min(a.cpu_s, b.cpu_s)};
}

// libgomp's default spin (GOMP_SPINCOUNT 300000 pauses) lasts a few ms; 50 ms leaves room.
void LetOpenMpSettle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

#ifdef TPUEMU_HAVE_ONEDNN
// A bf16 x bf16 -> f32 matmul primitive for one size, built once.
struct RawGemm::OneDnnBf16 {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul matmul;
  dnnl::memory a, b, c;

  OneDnnBf16(int64_t m, int64_t k, int64_t n, engine::Bf16Bits* a_bits, engine::Bf16Bits* b_bits,
             float* out) {
    using dnnl::memory;
    memory::desc a_md({m, k}, memory::data_type::bf16, memory::format_tag::ab);
    memory::desc b_md({k, n}, memory::data_type::bf16, memory::format_tag::ab);
    memory::desc out_md({m, n}, memory::data_type::f32, memory::format_tag::ab);
    matmul =
        dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, out_md), engine));
    a = memory(a_md, engine, a_bits);
    b = memory(b_md, engine, b_bits);
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

RawGemm::RawGemm(int64_t m, int64_t k, int64_t n) : m_(m), k_(k), n_(n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  a_.resize(static_cast<std::size_t>(m * k));
  b_.resize(static_cast<std::size_t>(k * n));
  for (float& x : a_) x = dist(rng);
  for (float& x : b_) x = dist(rng);
  c_.resize(static_cast<std::size_t>(m * n));
  a_bits_.resize(a_.size());
  b_bits_.resize(b_.size());
  engine::RoundToBf16Bits(a_.data(), a_bits_.data(), a_.size());
  engine::RoundToBf16Bits(b_.data(), b_bits_.data(), b_.size());
}

RawGemm::~RawGemm() = default;

std::map<std::string, std::function<void()>> RawGemm::Kernels(int threads) {
  std::map<std::string, std::function<void()>> kernels;
#ifdef TPUEMU_HAVE_ONEDNN
  // Each kernel sets its OpenMP team and restores one thread (the engine's setting) after.
  if (engine::OneDnnAvailable()) {
    // A oneDNN primitive divides its work among the OpenMP threads there are when it is created,
    // so each thread count gets its own (one made under the engine's one-thread setting would
    // run on one thread whatever the team).
    std::unique_ptr<OneDnnBf16>& bf16 = bf16_[threads];
    if (!bf16) {
      omp_set_num_threads(threads);
      bf16 = std::make_unique<OneDnnBf16>(m_, k_, n_, a_bits_.data(), b_bits_.data(), c_.data());
      omp_set_num_threads(1);
    }
    kernels["raw_onednn_bf16"] = [bf16 = bf16.get(), threads] {
      omp_set_num_threads(threads);
      bf16->Run();
      omp_set_num_threads(1);
    };
  }
  kernels["raw_onednn_f32"] = [this, threads] {
    omp_set_num_threads(threads);
    dnnl_sgemm('N', 'N', m_, n_, k_, 1.0f, a_.data(), k_, b_.data(), n_, 0.0f, c_.data(), n_);
    omp_set_num_threads(1);
  };
#endif
  if (threads == 1) {
    kernels["raw_eigen_f32"] = [this] {
      engine::PassArgs args;
      args.a = {a_.data(), k_, false, 0};
      args.b = {b_.data(), n_, false, 0};
      args.c = c_.data();
      args.ldc = n_;
      args.m = m_;
      args.n = n_;
      args.k = k_;
      engine::eigen_gemm::Pass(args);
    };
  }
  return kernels;
}

std::pair<std::string, Timing> RawGemm::Best(int threads, int reps) {
  std::pair<std::string, Timing> best{"", {}};
  for (auto& [name, fn] : Kernels(threads)) {
    fn();  // warm-up
    Timing t = Measure(fn);
    for (int r = 1; r < reps; ++r) t = Min(t, Measure(fn));
    if (best.first.empty() || t.wall_s < best.second.wall_s) best = {name, t};
  }
  if (threads > 1) LetOpenMpSettle();
  return best;
}

}  // namespace tpuemu::bench
