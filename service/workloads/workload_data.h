// Synthetic data for the built-in workloads (workloads.cpp, workload_transformer.cpp): seeded
// normal samples, f32 tensors made from them, and a teacher-labelled classification batch split
// over the shards. Header-only; stateless apart from the caller's rng.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/runtime/tensor.h"

namespace tpuemu::service::workload_data {

// n samples of N(0, stddev²), drawn from `rng` (so a seed fixes the data), in tensor storage (a
// weight takes it over without a copy). Stops early once *cancel is set (the rest indeterminate:
// the caller then discards what it made); it looks every 64K samples (~1 ms), so a cancel or
// timeout is not held up by generating a large workload.
inline engine::FloatBuffer Normal(std::mt19937_64& rng, const std::atomic<bool>* cancel, int64_t n,
                                  double stddev) {
  constexpr int64_t kGrain = int64_t{1} << 16;
  std::normal_distribution<float> dist(0.0f, static_cast<float>(stddev));
  engine::FloatBuffer v(static_cast<size_t>(n));
  for (int64_t begin = 0; begin < n; begin += kGrain) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) break;
    const int64_t end = std::min(n, begin + kGrain);
    for (int64_t i = begin; i < end; ++i) v[static_cast<size_t>(i)] = dist(rng);
  }
  return v;
}
inline engine::FloatBuffer Normal(std::mt19937_64& rng, int64_t n, double stddev) {
  return Normal(rng, nullptr, n, stddev);
}

// An f32 tensor owning `values`; the caller guarantees values.size() == shape's element count.
inline engine::Tensor Make(engine::Shape shape, engine::FloatBuffer values) {
  return std::move(engine::Tensor::FromF32(std::move(shape), std::move(values))).value();
}

// The feeds of one shard: parameter id -> value.
using ShardData = std::map<std::string, engine::Tensor>;

// A classification batch whose labels come from a fixed random teacher (so there is something to
// learn): x ~ N(0, 1) [batch, features], teacher ~ N(0, 1) [features, classes], label =
// argmax(x · teacher). Shard s gets rows [s·b, (s+1)·b), b = batch / shards, as "x" of shape
// {b, x_dims...} (x_dims multiply to features) and "labels" int32[b]. Drawing stops early once
// *cancel is set (Normal): the caller then discards the batch.
inline std::vector<ShardData> TeacherLabelled(std::mt19937_64& rng, int64_t batch, int64_t features,
                                              int64_t classes, int shards,
                                              const std::vector<int64_t>& x_dims,
                                              const std::atomic<bool>* cancel = nullptr) {
  const engine::FloatBuffer x = Normal(rng, cancel, batch * features, 1.0);
  const engine::FloatBuffer teacher = Normal(rng, cancel, features * classes, 1.0);
  std::vector<int32_t> labels(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) {
    float best = -1e30f;
    for (int64_t c = 0; c < classes; ++c) {
      float v = 0;
      for (int64_t f = 0; f < features; ++f) v += x[i * features + f] * teacher[f * classes + c];
      if (v > best) best = v, labels[static_cast<size_t>(i)] = static_cast<int32_t>(c);
    }
  }
  const int64_t b = batch / shards;
  std::vector<ShardData> out(static_cast<size_t>(shards));
  for (int s = 0; s < shards; ++s) {
    std::vector<int64_t> dims{b};
    dims.insert(dims.end(), x_dims.begin(), x_dims.end());
    const auto xb = x.begin() + s * b * features;
    out[static_cast<size_t>(s)]["x"] =
        Make(engine::Shape(dims), engine::FloatBuffer(xb, xb + b * features));
    const auto lb = labels.begin() + s * b;
    out[static_cast<size_t>(s)]["labels"] =
        std::move(engine::Tensor::FromI32({b}, std::vector<int32_t>(lb, lb + b))).value();
  }
  return out;
}

}  // namespace tpuemu::service::workload_data
