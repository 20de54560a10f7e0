// Synthetic data for the built-in workloads (workloads.cpp, workload_transformer.cpp): seeded
// normal samples and f32 tensors made from them. Header-only; stateless apart from the caller's
// rng.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "engine/tensor.h"

namespace tpuemu::service::workload_data {

// n samples of N(0, stddev²), drawn from `rng` (so a seed fixes the data). Stops early once
// *cancel is set (the rest zero: the caller then discards what it made); it looks every 64K
// samples (~1 ms), so a cancel or timeout is not held up by generating a large workload.
inline std::vector<float> Normal(std::mt19937_64& rng, const std::atomic<bool>* cancel, int64_t n,
                                 double stddev) {
  constexpr int64_t kGrain = int64_t{1} << 16;
  std::normal_distribution<float> dist(0.0f, static_cast<float>(stddev));
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t begin = 0; begin < n; begin += kGrain) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) break;
    const int64_t end = std::min(n, begin + kGrain);
    for (int64_t i = begin; i < end; ++i) v[static_cast<size_t>(i)] = dist(rng);
  }
  return v;
}
inline std::vector<float> Normal(std::mt19937_64& rng, int64_t n, double stddev) {
  return Normal(rng, nullptr, n, stddev);
}

// An f32 tensor; the caller guarantees values.size() == shape's element count.
inline engine::Tensor Make(engine::Shape shape, const std::vector<float>& values) {
  return std::move(engine::Tensor::FromF32(std::move(shape), values)).value();
}

}  // namespace tpuemu::service::workload_data
