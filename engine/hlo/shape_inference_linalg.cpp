// Shape rules of dot, convolution, gather and scatter (xla/service/shape_inference.cc and
// docs/operation_semantics.md).
#include <algorithm>

#include "engine/hlo/verifier_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

bool Sorted(const std::vector<int64_t>& v) { return std::is_sorted(v.begin(), v.end()); }

Result<Shape> InferDot(const InferContext& c) {
  const Instruction& inst = c.inst;
  // A sparse dot has lhs, rhs and one or two metadata operands; the compressed operand's
  // contracting size is a fraction of the logical one, so contracting sizes are not compared.
  const bool sparse = !inst.a().sparsity.empty();
  if (sparse) {
    TPUEMU_RETURN_IF_ERROR(OperandCount(c, -1, 3));
    if (c.operands.size() > 4) return Bad(inst, "a sparse dot takes at most 4 operands");
  } else {
    TPUEMU_RETURN_IF_ERROR(OperandCount(c, 2));
  }
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  const Shape& l = *c.operands[0];
  const Shape& r = *c.operands[1];
  const DotDims& d = inst.a().dot;
  if (d.lhs_batch.size() != d.rhs_batch.size() ||
      d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return Bad(inst, "lhs and rhs list different numbers of batch or contracting dimensions");
  }
  std::vector<int64_t> lhs_all = d.lhs_batch, rhs_all = d.rhs_batch;
  lhs_all.insert(lhs_all.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
  rhs_all.insert(rhs_all.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
  if (!ValidDims(lhs_all, l.rank()) || !ValidDims(rhs_all, r.rank())) {
    return Bad(inst, "batch/contracting dimensions are out of range or repeated for " +
                         l.ToString() + " and " + r.ToString());
  }
  for (size_t i = 0; i < lhs_all.size(); ++i) {
    const int64_t a = l.dims[static_cast<size_t>(lhs_all[i])];
    const int64_t b = r.dims[static_cast<size_t>(rhs_all[i])];
    const bool batch = i < d.lhs_batch.size();
    if (a != b && (batch || !sparse)) {
      return Bad(inst, std::string(batch ? "batch" : "contracting") + " dimension sizes differ: " +
                           l.ToString() + " dim " + std::to_string(lhs_all[i]) + " is " +
                           std::to_string(a) + ", " + r.ToString() + " dim " +
                           std::to_string(rhs_all[i]) + " is " + std::to_string(b));
    }
  }
  if (!(IsFloating(l.type) == IsFloating(r.type))) {
    return Bad(inst, "cannot multiply " + l.ToString() + " by " + r.ToString());
  }
  std::vector<int64_t> dims;
  for (int64_t b : d.lhs_batch) dims.push_back(l.dims[static_cast<size_t>(b)]);
  for (int64_t i = 0; i < l.rank(); ++i) {
    if (!Contains(lhs_all, i)) dims.push_back(l.dims[static_cast<size_t>(i)]);
  }
  for (int64_t i = 0; i < r.rank(); ++i) {
    if (!Contains(rhs_all, i)) dims.push_back(r.dims[static_cast<size_t>(i)]);
  }
  // preferred_element_type: the text's result type may differ from the operands'.
  const PrimitiveType type = inst.shape.IsArray() ? inst.shape.type : l.type;
  return Shape::Array(type, dims);
}

Result<Shape> InferConvolution(const InferContext& c) {
  const Instruction& inst = c.inst;
  TPUEMU_RETURN_IF_ERROR(OperandCount(c, 2));
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  const Shape& l = *c.operands[0];
  const Shape& k = *c.operands[1];
  const Attributes& a = inst.a();
  const ConvDims& d = a.conv;
  const auto n = static_cast<int64_t>(d.input_spatial.size());
  auto perm = [](int64_t x, int64_t y, const std::vector<int64_t>& s) {
    std::vector<int64_t> all = s;
    all.push_back(x);
    all.push_back(y);
    return all;
  };
  if (l.rank() != n + 2 || k.rank() != n + 2 ||
      !ValidDims(perm(d.input_batch, d.input_feature, d.input_spatial), l.rank()) ||
      !ValidDims(perm(d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial),
                 k.rank()) ||
      !ValidDims(perm(d.output_batch, d.output_feature, d.output_spatial), n + 2)) {
    return Bad(inst, "dim_labels do not fit " + l.ToString() + " and " + k.ToString());
  }
  if (static_cast<int64_t>(a.window.size()) != n && !(n == 0 && a.window.empty())) {
    return Bad(inst, "window= needs " + std::to_string(n) + " dimensions");
  }
  const int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  const int64_t in_f = l.dims[static_cast<size_t>(d.input_feature)];
  const int64_t in_b = l.dims[static_cast<size_t>(d.input_batch)];
  const int64_t k_in = k.dims[static_cast<size_t>(d.kernel_input_feature)];
  const int64_t k_out = k.dims[static_cast<size_t>(d.kernel_output_feature)];
  if (fgc < 1 || bgc < 1 || in_f != k_in * fgc || k_out % fgc != 0 || in_b % bgc != 0 ||
      k_out % bgc != 0) {
    return Bad(inst, "feature dims do not match: input features " + std::to_string(in_f) +
                         ", kernel " + std::to_string(k_in) + " in x " + std::to_string(k_out) +
                         " out, feature_group_count=" + std::to_string(fgc) +
                         ", batch_group_count=" + std::to_string(bgc));
  }
  std::vector<int64_t> out(static_cast<size_t>(n + 2));
  out[static_cast<size_t>(d.output_batch)] = in_b / bgc;
  out[static_cast<size_t>(d.output_feature)] = k_out;
  for (int64_t i = 0; i < n; ++i) {
    const WindowDim& w = a.window[static_cast<size_t>(i)];
    const int64_t in = l.dims[static_cast<size_t>(d.input_spatial[static_cast<size_t>(i)])];
    const int64_t ks = k.dims[static_cast<size_t>(d.kernel_spatial[static_cast<size_t>(i)])];
    if (ks != w.size || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return Bad(inst, "window dimension " + std::to_string(i) + " (size " +
                           std::to_string(w.size) + ") does not match the kernel's " +
                           std::to_string(ks));
    }
    out[static_cast<size_t>(d.output_spatial[static_cast<size_t>(i)])] = w.OutputSize(in);
  }
  const PrimitiveType type = inst.shape.IsArray() ? inst.shape.type : l.type;
  return Shape::Array(type, out);
}

// Batch dims of the indices: every dim but index_vector_dim (which may be == rank: implicit 1).
std::vector<int64_t> IndexBatchDims(const Shape& indices, int64_t ivd) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != ivd) dims.push_back(indices.dims[static_cast<size_t>(i)]);
  }
  return dims;
}

Result<Shape> InferGather(const InferContext& c) {
  const Instruction& inst = c.inst;
  TPUEMU_RETURN_IF_ERROR(OperandCount(c, 2));
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  const Shape& x = *c.operands[0];
  const Shape& idx = *c.operands[1];
  const GatherDims& g = inst.a().gather;
  const int64_t ivd = g.index_vector_dim;
  if (!IsInteger(idx.type)) return Bad(inst, "start indices must be integers");
  if (ivd < 0 || ivd > idx.rank()) return Bad(inst, "index_vector_dim is out of range");
  const int64_t vec = ivd == idx.rank() ? 1 : idx.dims[static_cast<size_t>(ivd)];
  if (static_cast<int64_t>(g.start_index_map.size()) != vec ||
      !ValidDims(g.start_index_map, x.rank())) {
    return Bad(inst, "start_index_map=" + Dims(g.start_index_map) + " must map the " +
                         std::to_string(vec) + " index components onto dims of " + x.ToString());
  }
  if (static_cast<int64_t>(g.slice_sizes.size()) != x.rank()) {
    return Bad(inst, "slice_sizes= needs one size per dimension of " + x.ToString());
  }
  std::vector<int64_t> removed = g.collapsed_slice_dims;
  removed.insert(removed.end(), g.operand_batching_dims.begin(), g.operand_batching_dims.end());
  if (!ValidDims(removed, x.rank()) || !Sorted(g.collapsed_slice_dims) || !Sorted(g.offset_dims) ||
      g.operand_batching_dims.size() != g.start_indices_batching_dims.size()) {
    return Bad(inst, "collapsed_slice_dims/operand_batching_dims are invalid");
  }
  for (size_t i = 0; i < g.slice_sizes.size(); ++i) {
    const int64_t s = g.slice_sizes[i];
    if (s < 0 || s > x.dims[i] || (Contains(removed, static_cast<int64_t>(i)) && s > 1)) {
      return Bad(inst, "slice size " + std::to_string(s) + " does not fit dimension " +
                           std::to_string(i) + " of " + x.ToString());
    }
  }
  for (int64_t b : g.start_indices_batching_dims) {
    if (b < 0 || b >= idx.rank() || b == ivd) return Bad(inst, "bad start_indices_batching_dims");
  }
  const std::vector<int64_t> batch = IndexBatchDims(idx, ivd);
  const size_t out_rank = batch.size() + g.offset_dims.size();
  if (g.offset_dims.size() != static_cast<size_t>(x.rank()) - removed.size() ||
      !ValidDims(g.offset_dims, static_cast<int64_t>(out_rank))) {
    return Bad(inst, "offset_dims=" + Dims(g.offset_dims) + " do not fit " + x.ToString());
  }
  std::vector<int64_t> out;
  size_t next_offset = 0, next_batch = 0;
  for (size_t i = 0; i < out_rank; ++i) {
    if (Contains(g.offset_dims, static_cast<int64_t>(i))) {
      while (Contains(removed, static_cast<int64_t>(next_offset))) ++next_offset;
      out.push_back(g.slice_sizes[next_offset++]);
    } else {
      out.push_back(batch[next_batch++]);
    }
  }
  return Shape::Array(x.type, out);
}

Result<Shape> InferScatter(const InferContext& c) {
  const Instruction& inst = c.inst;
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  const size_t total = c.operands.size();
  if (total < 3 || total % 2 == 0) return Bad(inst, "scatter takes N operands, indices, N updates");
  const size_t n = total / 2;
  const Shape& x = *c.operands[0];
  const Shape& idx = *c.operands[n];
  const Shape& upd = *c.operands[n + 1];
  const ScatterDims& s = inst.a().scatter;
  const int64_t ivd = s.index_vector_dim;
  if (!IsInteger(idx.type)) return Bad(inst, "scatter indices must be integers");
  if (ivd < 0 || ivd > idx.rank()) return Bad(inst, "index_vector_dim is out of range");
  for (size_t i = 0; i < n; ++i) {
    if (c.operands[i]->dims != x.dims || c.operands[n + 1 + i]->dims != upd.dims) {
      return Bad(inst, "all operands (and all updates) must have the same dimensions");
    }
  }
  const int64_t vec = ivd == idx.rank() ? 1 : idx.dims[static_cast<size_t>(ivd)];
  std::vector<int64_t> inserted = s.inserted_window_dims;
  inserted.insert(inserted.end(), s.input_batching_dims.begin(), s.input_batching_dims.end());
  if (static_cast<int64_t>(s.scatter_dims_to_operand_dims.size()) != vec ||
      !ValidDims(s.scatter_dims_to_operand_dims, x.rank()) || !ValidDims(inserted, x.rank()) ||
      !Sorted(s.update_window_dims) || !ValidDims(s.update_window_dims, upd.rank()) ||
      static_cast<int64_t>(s.update_window_dims.size() + inserted.size()) != x.rank() ||
      s.input_batching_dims.size() != s.scatter_indices_batching_dims.size()) {
    return Bad(inst, "scatter dimension numbers do not fit " + x.ToString() + ", " +
                         idx.ToString() + " and " + upd.ToString());
  }
  const std::vector<int64_t> batch = IndexBatchDims(idx, ivd);
  if (static_cast<size_t>(upd.rank()) != s.update_window_dims.size() + batch.size()) {
    return Bad(inst, "updates " + upd.ToString() + " must have rank " +
                         std::to_string(s.update_window_dims.size() + batch.size()));
  }
  size_t next_batch = 0, next_window = 0;
  for (int64_t i = 0; i < upd.rank(); ++i) {
    const int64_t size = upd.dims[static_cast<size_t>(i)];
    if (Contains(s.update_window_dims, i)) {
      while (Contains(inserted, static_cast<int64_t>(next_window))) ++next_window;
      if (size > x.dims[next_window++]) return Bad(inst, "an update window exceeds the operand");
    } else if (size != batch[next_batch++]) {
      return Bad(inst, "update scatter dims do not match the indices' batch dims");
    }
  }
  auto comp = Called(c, 0, "to_apply");
  if (!comp.ok()) return comp.status();
  std::vector<Shape> params;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) params.push_back(Shape::Array(c.operands[i]->type, {}));
  }
  auto root = CheckSignature(c, **comp, params, "to_apply");
  if (!root.ok()) return root.status();
  if (n == 1) return x;
  std::vector<Shape> outs;
  for (size_t i = 0; i < n; ++i) outs.push_back(*c.operands[i]);
  return Shape::Tuple(std::move(outs));
}

}  // namespace

Result<Shape> InferDotOrConvolution(const InferContext& c) {
  return c.inst.opcode == Opcode::kDot ? InferDot(c) : InferConvolution(c);
}

Result<Shape> InferGatherOrScatter(const InferContext& c) {
  return c.inst.opcode == Opcode::kGather ? InferGather(c) : InferScatter(c);
}

}  // namespace tpuemu::engine::hlo::internal
