// sort (any comparator, any number of operands), topk and map. Sorting is always stable (XLA
// leaves unstable order unspecified; stable is one valid, deterministic choice).
#include <algorithm>
#include <numeric>

#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {

Result<Value> Sort(KernelContext& ctx, const Instruction& inst,
                   const std::vector<const Array*>& operands) {
  const size_t n = operands.size();
  const Array& keys = *operands[0];
  const auto dim = static_cast<size_t>(inst.dimensions[0]);
  const int64_t len = keys.dims[dim];
  const int64_t stride = Strides(keys.dims)[dim];
  std::vector<Array> outs;
  for (const Array* a : operands) outs.push_back(*a);
  ScalarComputation& cmp = ctx.Scalar(inst.called[0]);
  std::vector<Scalar> args(2 * n);
  Scalar result[1];
  Status error;
  std::vector<int64_t> order(static_cast<size_t>(len));
  // Every 1-D slice along `dim`: its first element's offset walks the other dims.
  std::vector<int64_t> outer = keys.dims;
  outer[dim] = 1;
  const std::vector<int64_t> strides = Strides(keys.dims);
  std::vector<int64_t> idx(outer.size(), 0);
  for (int64_t s = 0, slices = Product(outer); s < slices; ++s) {
    int64_t base = 0;
    for (size_t d = 0; d < idx.size(); ++d) base += idx[d] * strides[d];
    NextIndex(idx, outer);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      if (!error.ok()) return false;
      for (size_t j = 0; j < n; ++j) {
        args[2 * j] = GetScalar(*operands[j], base + a * stride);
        args[2 * j + 1] = GetScalar(*operands[j], base + b * stride);
      }
      Status st = cmp.Apply(args.data(), result);
      if (!st.ok()) {
        error = st;
        return false;
      }
      return result[0].i != 0;
    });
    TPUEMU_RETURN_IF_ERROR(error);
    for (size_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < len; ++p) {
        SetScalar(outs[j], base + p * stride,
                  GetScalar(*operands[j], base + order[static_cast<size_t>(p)] * stride));
      }
    }
  }
  if (n == 1) return Value::Of(std::move(outs[0]));
  std::vector<Value> elements;
  for (Array& a : outs) elements.push_back(Value::Of(std::move(a)));
  return Value::Tuple(std::move(elements));
}

Result<Value> TopK(const Instruction& inst, const Array& x) {
  const int64_t k = inst.a().k;
  const int64_t len = x.dims.empty() ? 1 : x.dims.back();
  const int64_t rows = len == 0 ? 0 : x.size() / len;
  std::vector<int64_t> out_dims = x.dims;
  out_dims.back() = k;
  Array values = Array::Zeros(x.type, out_dims);
  Array indices = Array::Zeros(PrimitiveType::kS32, out_dims);
  const bool largest = inst.a().largest;
  const Direction dir = largest ? Direction::kGt : Direction::kLt;
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return Compare(dir, CompareType::kTotalOrder, GetScalar(x, r * len + a),
                     GetScalar(x, r * len + b));
    });
    for (int64_t j = 0; j < k; ++j) {
      SetScalar(values, r * k + j, GetScalar(x, r * len + order[static_cast<size_t>(j)]));
      indices.i[static_cast<size_t>(r * k + j)] = order[static_cast<size_t>(j)];
    }
  }
  return Value::Tuple({Value::Of(std::move(values)), Value::Of(std::move(indices))});
}

Result<Array> Map(KernelContext& ctx, const Instruction& inst,
                  const std::vector<const Array*>& operands) {
  Array out = Array::Zeros(inst.shape.type, inst.shape.dims);
  ScalarComputation& fn = ctx.Scalar(inst.called[0]);
  std::vector<Scalar> args(operands.size());
  Scalar result[1];
  for (int64_t k = 0, n = out.size(); k < n; ++k) {
    for (size_t j = 0; j < operands.size(); ++j) args[j] = GetScalar(*operands[j], k);
    TPUEMU_RETURN_IF_ERROR(fn.Apply(args.data(), result));
    SetScalar(out, k, result[0]);
  }
  return out;
}

}  // namespace tpuemu::engine::hlo::internal
