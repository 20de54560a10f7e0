// The raw library GEMMs the engine is compared with (bench only): oneDNN bf16 (where the CPU has
// AVX512-BF16 or AMX), oneDNN f32 (dnnl_sgemm) and Eigen f32 in the best ISA variant the engine
// built, on N x N row-major operands, with a given number of threads (Eigen: 1 only), plus the
// CPU model for the report. Not thread-safe: one RawGemm per benchmark thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/numerics.h"

namespace tpuemu::bench {

// "model name" of /proc/cpuinfo.
std::string CpuModel();

// Wall seconds of one call of fn.
double Seconds(const std::function<void()>& fn);

class RawGemm {
 public:
  explicit RawGemm(int64_t n);
  ~RawGemm();

  // name -> one N³ GEMM with `threads` threads, for every raw kernel available at that count.
  std::map<std::string, std::function<void()>> Kernels(int threads);

  int64_t n() const { return n_; }
  const float* a() const { return a_.data(); }
  const float* b() const { return b_.data(); }
  float* c() { return c_.data(); }

  // Best wall time of `reps` calls (after one warm-up) of the fastest raw kernel at `threads`,
  // and its name.
  std::pair<std::string, double> Best(int threads, int reps);

 private:
  struct OneDnnBf16;
  int64_t n_;
  std::vector<float> a_, b_, c_;
  std::vector<engine::Bf16Bits> a_bits_, b_bits_;
  std::unique_ptr<OneDnnBf16> bf16_;
};

}  // namespace tpuemu::bench
