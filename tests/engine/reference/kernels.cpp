// Data-movement kernels (broadcast, transpose, slice, concat, convert), the cross-entropy loss,
// RunKernel dispatch. Arithmetic vector kernels: elementwise.cpp.
#include "tests/engine/reference/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tests/engine/reference/strided.h"

namespace tpuemu::engine::reference {
namespace {

template <typename T>
T* Data(Tensor& t) {
  if constexpr (std::is_same_v<T, float>) {
    return t.f32();
  } else {
    return t.i32();
  }
}
template <typename T>
const T* Data(const Tensor& t) {
  if constexpr (std::is_same_v<T, float>) {
    return t.f32();
  } else {
    return t.i32();
  }
}

// out[i] = in[base + Σ index[d]·strides[d]] for a strided view of `in`, row by row of out (a
// contiguous last dim copies whole runs), in chunks on the context. Works for f32/bf16 and int32.
template <typename T>
bool GatherT(const KernelContext& ctx, const T* src, T* dst, const Shape& shape,
             const std::vector<int64_t>& strides, int64_t base) {
  if (shape.NumElements() == 0) return true;
  const int64_t len = RowLength(shape);
  const int64_t step = shape.rank() > 0 ? strides.back() : 0;
  return ParallelChunks(ctx.parallel, RowCount(shape),
                        std::max<int64_t>(1, kElementwiseGrain / len), [&](int64_t r0, int64_t r1) {
                          RowWalker walk(shape, {strides}, {base}, r0);
                          for (int64_t r = r0; r < r1; ++r, walk.Next()) {
                            const T* in = src + walk.offset(0);
                            T* out = dst + r * len;
                            if (step == 1) {
                              std::memcpy(out, in, sizeof(T) * static_cast<size_t>(len));
                            } else {
                              for (int64_t j = 0; j < len; ++j) out[j] = in[j * step];
                            }
                          }
                        });
}

bool Gather(const KernelContext& ctx, const Tensor& in, Tensor& out,
            const std::vector<int64_t>& strides, int64_t base) {
  if (in.dtype() == DType::kI32) {
    return GatherT(ctx, in.i32(), out.i32(), out.shape(), strides, base);
  }
  return GatherT(ctx, in.f32(), out.f32(), out.shape(), strides, base);
}

bool Broadcast(const KernelContext& ctx, const Op& op, const Tensor& x, Tensor& out) {
  if (!op.attrs.broadcast_dims) {
    return Gather(ctx, x, out, BroadcastStrides(x.shape(), out.shape()), 0);
  }
  const auto st = Strides(x.shape());
  std::vector<int64_t> strides(static_cast<size_t>(out.shape().rank()), 0);
  const auto& bd = *op.attrs.broadcast_dims;
  for (size_t i = 0; i < bd.size(); ++i) {
    if (x.shape().dim(static_cast<int>(i)) != 1) strides[static_cast<size_t>(bd[i])] = st[i];
  }
  return Gather(ctx, x, out, strides, 0);
}

bool Transpose(const KernelContext& ctx, const Op& op, const Tensor& x, Tensor& out) {
  const auto st = Strides(x.shape());
  std::vector<int64_t> strides;
  for (int64_t p : op.attrs.perm) strides.push_back(st[static_cast<size_t>(p)]);
  return Gather(ctx, x, out, strides, 0);
}

bool SliceKernel(const KernelContext& ctx, const Op& op, const Tensor& x, Tensor& out) {
  const auto st = Strides(x.shape());
  int64_t base = 0;
  for (size_t d = 0; d < st.size(); ++d) base += op.attrs.start[d] * st[d];
  return Gather(ctx, x, out, st, base);
}

template <typename T>
void ConcatT(const Op& op, const std::vector<const Tensor*>& in, Tensor& out) {
  const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + out.shape().rank() : op.attrs.axis;
  int64_t outer, out_len, inner;
  AroundAxis(out.shape(), axis, &outer, &out_len, &inner);
  T* dst = Data<T>(out);
  int64_t offset = 0;
  for (const Tensor* t : in) {
    const int64_t len = t->shape().dim(static_cast<int>(axis));
    const T* src = Data<T>(*t);
    // An empty input (a zero-length slice) has no buffer: memcpy from null is UB even for 0 bytes.
    for (int64_t a = 0; a < outer && len * inner > 0; ++a) {
      std::memcpy(dst + (a * out_len + offset) * inner, src + a * len * inner,
                  sizeof(T) * static_cast<size_t>(len * inner));
    }
    offset += len;
  }
}

void Convert(const Tensor& x, Tensor& out) {
  const int64_t n = x.num_elements();
  if (out.dtype() == DType::kI32) {
    if (x.dtype() == DType::kI32) {
      std::copy(x.i32(), x.i32() + n, out.i32());
      return;
    }
    for (int64_t i = 0; i < n; ++i) {  // XLA: truncate toward zero, saturate, NaN -> 0
      const float v = x.f32()[i];
      out.i32()[i] = std::isnan(v)         ? 0
                     : v >= 2147483647.0f  ? std::numeric_limits<int32_t>::max()
                     : v <= -2147483648.0f ? std::numeric_limits<int32_t>::min()
                                           : static_cast<int32_t>(v);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    out.f32()[i] = x.dtype() == DType::kI32 ? static_cast<float>(x.i32()[i]) : x.f32()[i];
  }
}

Status CrossEntropy(const Op& op, const Tensor& logits, const Tensor& labels, Tensor& out) {
  const int64_t b = logits.shape().dim(0), c = logits.shape().dim(1);
  const bool grad = op.kind == OpKind::kSoftmaxCrossEntropyGrad;
  double loss = 0;
  std::vector<double> p(static_cast<size_t>(c));
  for (int64_t r = 0; r < b; ++r) {
    const int32_t label = labels.i32()[r];
    if (label < 0 || label >= c) {
      return Status::InvalidArgument(
          std::string(OpKindName(op.kind)) + " \"" + op.id + "\": label " + std::to_string(label) +
          " at row " + std::to_string(r) + " is out of range [0, " + std::to_string(c) + ")");
    }
    const float* row = logits.f32() + r * c;
    const double mx = *std::max_element(row, row + c);
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += p[static_cast<size_t>(j)] = std::exp(row[j] - mx);
    loss += std::log(sum) + mx - row[label];
    if (grad) {
      for (int64_t j = 0; j < c; ++j) {
        out.f32()[r * c + j] = static_cast<float>(
            (p[static_cast<size_t>(j)] / sum - (j == label ? 1.0 : 0.0)) / static_cast<double>(b));
      }
    }
  }
  if (!grad) out.f32()[0] = b ? static_cast<float>(loss / static_cast<double>(b)) : 0.0f;
  return Status::Ok();
}

}  // namespace

Status StoppedIn(const Op& op, const KernelContext& ctx) {
  Status s = ctx.parallel.cancel.Check("in op '" + op.id + "'");
  // Only a stopped token ends a kernel early; OK here would hide a partial result.
  return s.ok() ? Status::Cancelled("execution stopped in op '" + op.id + "'") : s;
}

Status RunKernel(const Op& op, const std::vector<const Tensor*>& in, Tensor& out,
                 const KernelContext& ctx) {
  switch (op.kind) {
    case OpKind::kDot:
      return DotKernel(op, *in[0], *in[1], out, ctx);
    case OpKind::kConv2D:
      return Conv2DKernel(op, *in[0], *in[1], out, ctx);
    case OpKind::kConv2DBackpropInput:
      return Conv2DBackpropInputKernel(op, *in[0], *in[1], out, ctx);
    case OpKind::kConv2DBackpropFilter:
      return Conv2DBackpropFilterKernel(op, *in[0], *in[1], out, ctx);
    case OpKind::kReluGrad:
    case OpKind::kGeluGrad:
      TPUEMU_RETURN_IF_ERROR(ActivationGradKernel(op, *in[0], *in[1], out, ctx));
      break;
    case OpKind::kSoftmax:
      TPUEMU_RETURN_IF_ERROR(SoftmaxKernel(op, *in[0], out, ctx));
      break;
    case OpKind::kReduce:
      TPUEMU_RETURN_IF_ERROR(ReduceKernel(op, *in[0], out, ctx));
      break;
    case OpKind::kBroadcast:
      if (!Broadcast(ctx, op, *in[0], out)) return StoppedIn(op, ctx);
      break;
    case OpKind::kTranspose:
      if (!Transpose(ctx, op, *in[0], out)) return StoppedIn(op, ctx);
      break;
    case OpKind::kSlice:
      if (!SliceKernel(ctx, op, *in[0], out)) return StoppedIn(op, ctx);
      break;
    case OpKind::kConcat:
      if (out.dtype() == DType::kI32) {
        ConcatT<int32_t>(op, in, out);
      } else {
        ConcatT<float>(op, in, out);
      }
      break;
    case OpKind::kConvert:
      Convert(*in[0], out);
      break;
    case OpKind::kSoftmaxCrossEntropy:
    case OpKind::kSoftmaxCrossEntropyGrad:
      TPUEMU_RETURN_IF_ERROR(CrossEntropy(op, *in[0], *in[1], out));
      break;
    default:
      if (IsElementwiseBinary(op.kind)) {
        TPUEMU_RETURN_IF_ERROR(BinaryKernel(op, *in[0], *in[1], out, ctx));
      } else if (IsElementwiseUnary(op.kind)) {
        TPUEMU_RETURN_IF_ERROR(UnaryKernel(op, *in[0], out, ctx));
      } else {
        return Status::Internal("no kernel for op kind " + std::string(OpKindName(op.kind)));
      }
  }
  out.RoundToDType();
  return Status::Ok();
}

}  // namespace tpuemu::engine::reference
