// Data-movement kernels: every output element copies one source element located by strides.
#include <algorithm>

#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

// Calls f(out_index, src_offset) for every index of `dims` in row-major order from `begin` to
// `end` (the whole array by default), where src_offset = base + sum(index[d] * strides[d]).
template <typename F>
void Walk(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t base,
          F&& f, int64_t begin = 0, int64_t end = -1) {
  const int64_t n = end < 0 ? Product(dims) : end;
  if (n <= begin) return;
  const size_t rank = dims.size();
  if (rank == 0) {
    f(0, base);
    return;
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t off = base;
  for (int64_t d = static_cast<int64_t>(rank) - 1, rest = begin; d >= 0; --d) {
    const auto u = static_cast<size_t>(d);
    idx[u] = rest % dims[u];
    rest /= dims[u];
    off += idx[u] * strides[u];
  }
  const int64_t inner = dims[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  for (int64_t k = begin; k < n;) {
    int64_t o = off;
    const int64_t stop = std::min(inner, idx[rank - 1] + (n - k));  // this row, or the range's end
    for (int64_t j = idx[rank - 1]; j < stop; ++j, ++k, o += inner_stride) f(k, o);
    off -= idx[rank - 1] * inner_stride;  // back to the row's start: the outer dims advance it
    idx[rank - 1] = 0;
    // advance the outer dims
    for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      ++idx[u];
      off += strides[u];
      if (idx[u] < dims[u]) break;
      off -= strides[u] * dims[u];
      idx[u] = 0;
    }
  }
}

// dst[k] = src[offset(k)] over the walk; a large float copy in chunks on `parallel`'s threads.
Array Copy(const Array& src, std::vector<int64_t> out_dims, const std::vector<int64_t>& strides,
           int64_t base, const ParallelContext& parallel = {}) {
  Array out = Array::Uninitialized(src.type, std::move(out_dims));
  if (src.floating()) {
    float* o_data = out.f.data();
    const float* s_data = src.f.data();
    ParallelChunks(parallel, out.size(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      Walk(
          out.dims, strides, base, [&](int64_t k, int64_t o) { o_data[k] = s_data[o]; }, begin,
          end);
    });
  } else {
    Walk(out.dims, strides, base, [&](int64_t k, int64_t o) {
      out.i[static_cast<size_t>(k)] = src.i[static_cast<size_t>(o)];
    });
  }
  return out;
}

// dst[offset(k)] = src[k] over src's walk.
void Place(const Array& src, Array& dst, const std::vector<int64_t>& dst_strides, int64_t base) {
  if (src.floating()) {
    Walk(src.dims, dst_strides, base, [&](int64_t k, int64_t o) {
      dst.f[static_cast<size_t>(o)] = RoundToType(dst.type, src.f[static_cast<size_t>(k)]);
    });
  } else {
    Walk(src.dims, dst_strides, base, [&](int64_t k, int64_t o) {
      dst.i[static_cast<size_t>(o)] = src.i[static_cast<size_t>(k)];
    });
  }
}

int64_t IndexValue(const Array& a, int64_t k) {
  if (a.type == PrimitiveType::kU64) {
    const auto u = static_cast<uint64_t>(a.i[static_cast<size_t>(k)]);
    return u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
  }
  return a.i[static_cast<size_t>(k)];
}

}  // namespace

Array Broadcast(const Array& x, const std::vector<int64_t>& out_dims,
                const std::vector<int64_t>& dimensions, const ParallelContext& parallel) {
  const std::vector<int64_t> xs = Strides(x.dims);
  std::vector<int64_t> strides(out_dims.size(), 0);
  for (size_t i = 0; i < dimensions.size(); ++i) {
    strides[static_cast<size_t>(dimensions[i])] = xs[i];
  }
  return Copy(x, out_dims, strides, 0, parallel);
}

Array Transpose(const Array& x, const std::vector<int64_t>& perm, const ParallelContext& parallel) {
  const std::vector<int64_t> xs = Strides(x.dims);
  std::vector<int64_t> dims, strides;
  for (int64_t p : perm) {
    dims.push_back(x.dims[static_cast<size_t>(p)]);
    strides.push_back(xs[static_cast<size_t>(p)]);
  }
  return Copy(x, dims, strides, 0, parallel);
}

Array Reverse(const Array& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides = Strides(x.dims);
  int64_t base = 0;
  for (int64_t d : dims) {
    const auto u = static_cast<size_t>(d);
    if (x.dims[u] == 0) continue;
    base += (x.dims[u] - 1) * strides[u];
    strides[u] = -strides[u];
  }
  return Copy(x, x.dims, strides, base);
}

Array Slice(const Array& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& stride) {
  const std::vector<int64_t> xs = Strides(x.dims);
  std::vector<int64_t> dims, strides;
  int64_t base = 0;
  for (size_t i = 0; i < start.size(); ++i) {
    dims.push_back((limit[i] - start[i] + stride[i] - 1) / stride[i]);
    strides.push_back(xs[i] * stride[i]);
    base += start[i] * xs[i];
  }
  return Copy(x, dims, strides, base);
}

Array Concatenate(const std::vector<const Array*>& xs, int64_t dim) {
  std::vector<int64_t> dims = xs[0]->dims;
  const auto d = static_cast<size_t>(dim);
  dims[d] = 0;
  for (const Array* x : xs) dims[d] += x->dims[d];
  Array out = Array::Zeros(xs[0]->type, dims);
  const std::vector<int64_t> strides = Strides(dims);
  int64_t offset = 0;
  for (const Array* x : xs) {
    Place(*x, out, strides, offset * strides[d]);
    offset += x->dims[d];
  }
  return out;
}

Array Pad(const Array& x, const Scalar& value, const std::vector<PadDim>& padding) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < padding.size(); ++i) {
    const int64_t n = x.dims[i];
    dims.push_back(padding[i].low + padding[i].high + n +
                   std::max<int64_t>(n - 1, 0) * padding[i].interior);
  }
  Array out = Array::Zeros(x.type, dims);
  const int64_t total = out.size();
  for (int64_t k = 0; k < total; ++k) SetScalar(out, k, value);
  const std::vector<int64_t> os = Strides(dims);
  // Each source element lands at low + i * (interior + 1); negative pads drop elements.
  std::vector<int64_t> idx(x.dims.size(), 0);
  const int64_t n = x.size();
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < idx.size() && inside; ++d) {
      const int64_t p = padding[d].low + idx[d] * (padding[d].interior + 1);
      inside = p >= 0 && p < dims[d];
      off += p * os[d];
    }
    if (inside) SetScalar(out, off, GetScalar(x, k));
    NextIndex(idx, x.dims);
  }
  return out;
}

Array Iota(const Shape& shape, int64_t dim) {
  Array out = Array::Zeros(shape.type, shape.dims);
  std::vector<int64_t> idx(shape.dims.size(), 0);
  const int64_t n = out.size();
  for (int64_t k = 0; k < n; ++k) {
    const int64_t v = idx[static_cast<size_t>(dim)];
    if (out.floating()) {
      out.f[static_cast<size_t>(k)] = RoundToType(shape.type, static_cast<float>(v));
    } else {
      out.i[static_cast<size_t>(k)] = CanonicalInt(shape.type, v);
    }
    NextIndex(idx, shape.dims);
  }
  return out;
}

std::vector<int64_t> ClampedStarts(const std::vector<const Array*>& index_operands,
                                   const std::vector<int64_t>& operand_dims,
                                   const std::vector<int64_t>& sizes) {
  std::vector<int64_t> starts(operand_dims.size(), 0);
  const bool vector_form = index_operands.size() == 1 && index_operands[0]->rank() == 1;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t v = vector_form ? IndexValue(*index_operands[0], static_cast<int64_t>(i))
                                  : IndexValue(*index_operands[i], 0);
    starts[i] = std::clamp<int64_t>(v, 0, operand_dims[i] - sizes[i]);
  }
  return starts;
}

Array DynamicSlice(const Array& x, const std::vector<int64_t>& starts,
                   const std::vector<int64_t>& sizes) {
  const std::vector<int64_t> xs = Strides(x.dims);
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) base += starts[i] * xs[i];
  return Copy(x, sizes, xs, base);
}

Array DynamicUpdateSlice(const Array& x, const Array& update, const std::vector<int64_t>& starts) {
  Array out = x;
  const std::vector<int64_t> xs = Strides(x.dims);
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) base += starts[i] * xs[i];
  Place(update, out, xs, base);
  return out;
}

Array Bitcast(const Array& x, const Shape& from, const Shape& to) {
  // Logical -> physical: transpose into major-to-minor order of the operand's layout.
  auto major_to_minor = [](const Shape& s) {
    std::vector<int64_t> layout = s.Layout();
    std::reverse(layout.begin(), layout.end());
    return layout;
  };
  const std::vector<int64_t> in_perm = major_to_minor(from);
  Array physical = Transpose(x, in_perm);
  // Physical buffer read as the result's physical order, then back to logical.
  const std::vector<int64_t> out_perm = major_to_minor(to);
  std::vector<int64_t> out_physical_dims;
  for (int64_t p : out_perm) out_physical_dims.push_back(to.dims[static_cast<size_t>(p)]);
  physical.dims = out_physical_dims;
  std::vector<int64_t> inverse(out_perm.size());
  for (size_t i = 0; i < out_perm.size(); ++i)
    inverse[static_cast<size_t>(out_perm[i])] = static_cast<int64_t>(i);
  Array out = Transpose(physical, inverse);
  out.type = to.type;
  return out;
}

}  // namespace tpuemu::engine::hlo::internal
