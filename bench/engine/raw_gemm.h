// The raw library GEMMs the engine is compared with (bench only): oneDNN bf16 (where the CPU has
// AVX512-BF16 or AMX), oneDNN f32 (dnnl_sgemm) and Eigen f32 in the best ISA variant the engine
// built, on row-major operands (m x k times k x n; N x N for the square benches), with a given
// number of threads (Eigen: 1 only), plus the CPU model for the report. Not thread-safe: one
// RawGemm per benchmark thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/cpu_model.h"
#include "engine/hardware/numerics.h"

namespace tpuemu::bench {

// Wall time and the process's CPU time (all its threads) of one call. On a machine shared with
// other work, cpu_s / T estimates what a call on T evenly busy threads takes on T idle cores
// (waits and idle threads do not count, OpenMP spinning does); wall_s is what it took here.
struct Timing {
  double wall_s = 0;
  double cpu_s = 0;
};
Timing Measure(const std::function<void()>& fn);
// The smaller wall and the smaller CPU time of the two (each is a best-of on its own).
Timing Min(const Timing& a, const Timing& b);
// Waits until the OpenMP threads a raw kernel with more than one thread left behind have stopped
// spinning: libgomp's idle threads spin for some milliseconds before they sleep, and meanwhile
// they take the cores the engine's next measurement needs (measured: the engine's helper thread
// started a 2048x2048x1024 GEMM 4-5 ms after the caller, the ratio to raw oneDNN fell from
// 0.92 to 0.64).
void LetOpenMpSettle();

class RawGemm {
 public:
  explicit RawGemm(int64_t n) : RawGemm(n, n, n) {}
  RawGemm(int64_t m, int64_t k, int64_t n);
  ~RawGemm();

  // name -> one m x k x n GEMM with `threads` threads, for every raw kernel available at that
  // count.
  std::map<std::string, std::function<void()>> Kernels(int threads);

  int64_t m() const { return m_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  const float* a() const { return a_.data(); }
  const float* b() const { return b_.data(); }
  float* c() { return c_.data(); }

  // The fastest raw kernel at `threads` (by wall time, best of `reps` calls after a warm-up),
  // its name and its timing.
  std::pair<std::string, Timing> Best(int threads, int reps);

 private:
  struct OneDnnBf16;
  int64_t m_, k_, n_;
  std::vector<float> a_, b_, c_;
  std::vector<engine::Bf16Bits> a_bits_, b_bits_;
  std::map<int, std::unique_ptr<OneDnnBf16>> bf16_;  // per thread count, made on first use
};

}  // namespace tpuemu::bench
