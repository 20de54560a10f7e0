// Synthetic data for the built-in workloads (workloads.cpp, workload_transformer.cpp): seeded
// normal samples and f32 tensors made from them. Header-only; stateless apart from the caller's
// rng.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "engine/tensor.h"

namespace tpuemu::service::workload_data {

// n samples of N(0, stddev²), drawn from `rng` (so a seed fixes the data).
inline std::vector<float> Normal(std::mt19937_64& rng, int64_t n, double stddev) {
  std::normal_distribution<float> dist(0.0f, static_cast<float>(stddev));
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// An f32 tensor; the caller guarantees values.size() == shape's element count.
inline engine::Tensor Make(engine::Shape shape, const std::vector<float>& values) {
  return std::move(engine::Tensor::FromF32(std::move(shape), values)).value();
}

}  // namespace tpuemu::service::workload_data
