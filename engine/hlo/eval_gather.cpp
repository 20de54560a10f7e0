// gather and scatter with the full dimension numbers, batching dims included
// (docs/operation_semantics.md). Gather clamps each slice start into the operand; scatter skips
// an update whose window would leave the operand (XLA's ScatterExpander rule), applying the
// others in row-major order of the updates.
#include <algorithm>

#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

int64_t ReadIndex(const Array& a, int64_t k) {
  const int64_t v = a.i[static_cast<size_t>(k)];
  if (a.type == PrimitiveType::kU64 && v < 0) return INT64_MAX;
  return v;
}

// Maps the "batch" position G (indices dims except index_vector_dim, in order) to the start
// vector S of length `vec`.
struct IndexReader {
  const Array& indices;
  int64_t ivd;
  std::vector<int64_t> strides;
  IndexReader(const Array& idx, int64_t index_vector_dim)
      : indices(idx), ivd(index_vector_dim), strides(Strides(idx.dims)) {}

  int64_t Offset(const std::vector<int64_t>& g) const {
    int64_t off = 0;
    size_t next = 0;
    for (int64_t d = 0; d < indices.rank(); ++d) {
      if (d == ivd) continue;
      off += g[next++] * strides[static_cast<size_t>(d)];
    }
    return off;
  }
  int64_t Component(int64_t base, int64_t k) const {
    const int64_t step = ivd < indices.rank() ? strides[static_cast<size_t>(ivd)] : 0;
    return ReadIndex(indices, base + k * step);
  }
  // Position of indices dim `d` within G.
  static size_t GPosition(int64_t d, int64_t ivd) {
    return static_cast<size_t>(d < ivd ? d : d - 1);
  }
};

// Operand dims that are window dims (not collapsed/inserted and not batching), in order.
std::vector<int64_t> WindowDims(int64_t rank, const std::vector<int64_t>& removed,
                                const std::vector<int64_t>& batching) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(removed, d) && !Contains(batching, d)) dims.push_back(d);
  }
  return dims;
}

}  // namespace

Array Gather(const Instruction& inst, const Array& operand, const Array& indices) {
  const GatherDims& g = inst.a().gather;
  Array out = Array::Zeros(operand.type, inst.shape.dims);
  const IndexReader reader(indices, g.index_vector_dim);
  const std::vector<int64_t> window_dims =
      WindowDims(operand.rank(), g.collapsed_slice_dims, g.operand_batching_dims);
  const std::vector<int64_t> ostrides = Strides(operand.dims);
  std::vector<int64_t> idx(out.dims.size(), 0), batch, start(static_cast<size_t>(operand.rank()));
  for (int64_t k = 0, n = out.size(); k < n; ++k) {
    batch.clear();
    for (size_t d = 0; d < idx.size(); ++d) {
      if (!Contains(g.offset_dims, static_cast<int64_t>(d))) batch.push_back(idx[d]);
    }
    std::fill(start.begin(), start.end(), 0);
    const int64_t base = reader.Offset(batch);
    for (size_t c = 0; c < g.start_index_map.size(); ++c) {
      const auto d = static_cast<size_t>(g.start_index_map[c]);
      start[d] = std::clamp<int64_t>(reader.Component(base, static_cast<int64_t>(c)), 0,
                                     operand.dims[d] - g.slice_sizes[d]);
    }
    for (size_t b = 0; b < g.operand_batching_dims.size(); ++b) {
      start[static_cast<size_t>(g.operand_batching_dims[b])] =
          batch[IndexReader::GPosition(g.start_indices_batching_dims[b], g.index_vector_dim)];
    }
    int64_t off = 0;
    for (size_t d = 0; d < start.size(); ++d) off += start[d] * ostrides[d];
    for (size_t w = 0; w < g.offset_dims.size(); ++w) {
      off += idx[static_cast<size_t>(g.offset_dims[w])] *
             ostrides[static_cast<size_t>(window_dims[w])];
    }
    SetScalar(out, k, GetScalar(operand, off));
    NextIndex(idx, out.dims);
  }
  return out;
}

Result<Value> Scatter(KernelContext& ctx, const Instruction& inst,
                      const std::vector<const Array*>& operands) {
  const size_t n = operands.size() / 2;
  const ScatterDims& s = inst.a().scatter;
  const Array& indices = *operands[n];
  const Array& upd0 = *operands[n + 1];
  std::vector<Array> outs;
  for (size_t j = 0; j < n; ++j) outs.push_back(*operands[j]);
  const Array& x = outs[0];
  const IndexReader reader(indices, s.index_vector_dim);
  const std::vector<int64_t> window_dims =
      WindowDims(x.rank(), s.inserted_window_dims, s.input_batching_dims);
  const std::vector<int64_t> ostrides = Strides(x.dims);
  // Window extent per operand dim: the update's size for window dims, 1 otherwise.
  std::vector<int64_t> extent(static_cast<size_t>(x.rank()), 1);
  for (size_t w = 0; w < s.update_window_dims.size(); ++w) {
    extent[static_cast<size_t>(window_dims[w])] =
        upd0.dims[static_cast<size_t>(s.update_window_dims[w])];
  }
  ScalarComputation& fn = ctx.Scalar(inst.called[0]);
  std::vector<Scalar> args(2 * n), results(n);
  std::vector<int64_t> idx(upd0.dims.size(), 0), batch, start(static_cast<size_t>(x.rank()));
  for (int64_t k = 0, total = upd0.size(); k < total; ++k) {
    batch.clear();
    for (size_t d = 0; d < idx.size(); ++d) {
      if (!Contains(s.update_window_dims, static_cast<int64_t>(d))) batch.push_back(idx[d]);
    }
    std::fill(start.begin(), start.end(), 0);
    const int64_t base = reader.Offset(batch);
    for (size_t c = 0; c < s.scatter_dims_to_operand_dims.size(); ++c) {
      start[static_cast<size_t>(s.scatter_dims_to_operand_dims[c])] =
          reader.Component(base, static_cast<int64_t>(c));
    }
    for (size_t b = 0; b < s.input_batching_dims.size(); ++b) {
      start[static_cast<size_t>(s.input_batching_dims[b])] =
          batch[IndexReader::GPosition(s.scatter_indices_batching_dims[b], s.index_vector_dim)];
    }
    bool valid = true;
    int64_t off = 0;
    for (size_t d = 0; d < start.size(); ++d) {
      valid = valid && start[d] >= 0 && start[d] <= x.dims[d] - extent[d];
      off += start[d] * ostrides[d];
    }
    for (size_t w = 0; w < s.update_window_dims.size(); ++w) {
      off += idx[static_cast<size_t>(s.update_window_dims[w])] *
             ostrides[static_cast<size_t>(window_dims[w])];
    }
    NextIndex(idx, upd0.dims);
    if (!valid) continue;
    for (size_t j = 0; j < n; ++j) {
      args[j] = GetScalar(outs[j], off);
      args[n + j] = GetScalar(*operands[n + 1 + j], k);
    }
    TPUEMU_RETURN_IF_ERROR(fn.Apply(args.data(), results.data()));
    for (size_t j = 0; j < n; ++j) SetScalar(outs[j], off, results[j]);
  }
  if (n == 1) return Value::Of(std::move(outs[0]));
  std::vector<Value> elements;
  for (Array& a : outs) elements.push_back(Value::Of(std::move(a)));
  return Value::Tuple(std::move(elements));
}

}  // namespace tpuemu::engine::hlo::internal
