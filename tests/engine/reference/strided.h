// Strided views for the vector-unit kernels (internal to the engine): row-major strides,
// numpy-broadcast strides, and RowWalker, which walks the rows (all dims but the last) of a shape
// while tracking each input's offset, so kernels can run contiguous inner loops per row and start
// anywhere (a parallel chunk begins at an arbitrary row).
// Header-only, stateless apart from the walker's own position; not thread-safe per walker.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/runtime/tensor.h"

namespace tpuemu::engine::reference {

// Row-major element strides of `s`.
inline std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(static_cast<size_t>(s.rank()), 1);
  for (int i = s.rank() - 2; i >= 0; --i) {
    st[static_cast<size_t>(i)] = st[static_cast<size_t>(i) + 1] * s.dim(i + 1);
  }
  return st;
}

// Strides of `in` seen through numpy broadcasting to `out` (0 where in's dim is 1 or absent).
inline std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out) {
  const auto st = Strides(in);
  std::vector<int64_t> r(static_cast<size_t>(out.rank()), 0);
  for (int i = 0; i < in.rank(); ++i) {
    const int o = out.rank() - in.rank() + i;
    if (in.dim(i) != 1) r[static_cast<size_t>(o)] = st[static_cast<size_t>(i)];
  }
  return r;
}

// Splits a shape around `axis` into outer · len · inner.
inline void AroundAxis(const Shape& s, int64_t axis, int64_t* outer, int64_t* len, int64_t* inner) {
  *outer = 1, *inner = 1;
  for (int i = 0; i < axis; ++i) *outer *= s.dim(i);
  *len = s.dim(static_cast<int>(axis));
  for (int i = static_cast<int>(axis) + 1; i < s.rank(); ++i) *inner *= s.dim(i);
}

// Rows of `shape` = product of all dims but the last (1 for a scalar or a vector); row length =
// the last dim (1 for a scalar).
inline int64_t RowLength(const Shape& shape) {
  return shape.rank() == 0 ? 1 : shape.dim(shape.rank() - 1);
}
inline int64_t RowCount(const Shape& shape) {
  const int64_t len = RowLength(shape);
  return len == 0 ? 0 : shape.NumElements() / len;
}

// Walks rows of `shape` from row `first`, keeping offset(k) = base[k] + Σ index[d]·strides[k][d]
// over the row dims for each of the given stride vectors (one per input; each as long as the
// shape's rank; the last dim's stride is the caller's business).
class RowWalker {
 public:
  RowWalker(const Shape& shape, std::vector<std::vector<int64_t>> strides,
            std::vector<int64_t> base, int64_t first)
      : shape_(shape), strides_(std::move(strides)), offsets_(std::move(base)) {
    const int dims = shape.rank() - 1;
    index_.assign(static_cast<size_t>(dims > 0 ? dims : 0), 0);
    for (int d = dims - 1; d >= 0; --d) {
      const int64_t extent = shape.dim(d);
      index_[static_cast<size_t>(d)] = first % extent;
      first /= extent;
      for (size_t k = 0; k < offsets_.size(); ++k) {
        offsets_[k] += index_[static_cast<size_t>(d)] * strides_[k][static_cast<size_t>(d)];
      }
    }
  }

  int64_t offset(size_t k) const { return offsets_[k]; }

  void Next() {
    for (int d = static_cast<int>(index_.size()) - 1; d >= 0; --d) {
      const size_t du = static_cast<size_t>(d);
      if (++index_[du] < shape_.dim(d)) {
        for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] += strides_[k][du];
        return;
      }
      for (size_t k = 0; k < offsets_.size(); ++k) {
        offsets_[k] -= strides_[k][du] * (index_[du] - 1);
      }
      index_[du] = 0;
    }
  }

 private:
  const Shape& shape_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> offsets_;
  std::vector<int64_t> index_;
};

}  // namespace tpuemu::engine::reference
