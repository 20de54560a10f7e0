// Operands for the GEMM tests (gemm_test.cpp, gemm_operands_test.cpp): seeded random matrices
// and explicit transposes, row-major.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace tpuemu::engine {

// [rows, cols] values uniform in [-1, 1) from `seed`.
inline std::vector<float> RandomMatrix(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (float& x : v) x = dist(rng);
  return v;
}

// The [cols, rows] transpose of a [rows, cols] matrix.
inline std::vector<float> Transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  }
  return t;
}

}  // namespace tpuemu::engine
