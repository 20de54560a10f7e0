// The composite ops of the op lowering (op_lowering_internal.h), each as JAX traces it
// (jnp.matmul/einsum, lax.conv_general_dilated and its transpose rules,
// jax.nn.gelu(approximate=True), jax.nn.softmax, an optax-style cross-entropy), with the native
// kernels' order of operations (engine/kernels/vector_math.cpp, tests/engine/reference/kernels.cpp)
// so the stacks round alike.
#include <algorithm>
#include <numeric>
#include <set>

#include "engine/frontend/op_lowering_internal.h"

namespace tpuemu::engine::hlo::op_lowering_internal {
namespace {

// The constants of the tanh-approximate gelu, as float (engine/kernels/vector_math.cpp
// kGeluC/kGeluA).
constexpr float kLowerGeluC = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kLowerGeluA = 0.044715f;

// Low and high padding of conv2d along one dim, as the native kernel pads (ConvOutputDim).
std::pair<int64_t, int64_t> ConvPads(int64_t in, int64_t filter, int64_t stride,
                                     const Conv2DParams& p, int dim) {
  const ConvDim d =
      ConvOutputDim(in, filter, stride, p.padding, p.pads[2 * dim], p.pads[2 * dim + 1]);
  switch (p.padding) {
    case ConvPadding::kValid:
      return {0, 0};
    case ConvPadding::kSame:
      return {d.pad_before,
              std::max<int64_t>((d.out - 1) * stride + filter - in, 0) - d.pad_before};
    case ConvPadding::kExplicit:
      break;
  }
  return {p.pads[2 * dim], p.pads[2 * dim + 1]};
}

}  // namespace

// dot(lhs [..., m, k], rhs [..., k, n]) as dot_general: transposes become contracting-dim
// choices; equal batch dims are batch dims; a rank-2 operand shared across the other's batch is
// contracted without batch dims (jnp.matmul), and a shared lhs needs its m moved back behind the
// batch dims the dot put after it.
LoweredValue OpLowerer::LowerDot(const Op& op, const LoweredValue& l, const LoweredValue& r) {
  const int64_t lr = static_cast<int64_t>(l.dims.size()), rr = static_cast<int64_t>(r.dims.size());
  const int64_t lc = op.attrs.transpose_lhs ? lr - 2 : lr - 1;
  const int64_t rc = op.attrs.transpose_rhs ? rr - 1 : rr - 2;
  std::vector<int64_t> batch;
  if (lr == rr) {
    batch.resize(static_cast<size_t>(lr - 2));
    std::iota(batch.begin(), batch.end(), 0);
  }
  const LoweredValue d = Infer("dot", Opcode::kDot, {l, r}, [&](Instruction& inst) {
    DotDims& dims = inst.mutable_attrs().dot;
    dims.lhs_batch = dims.rhs_batch = batch;
    dims.lhs_contracting = {lc};
    dims.rhs_contracting = {rc};
  });
  if (lr == rr || rr == 2) return d;
  // lhs [m, k] shared: the dot gives [m, batch..., n]; move m behind the batch dims.
  std::vector<int64_t> perm;
  for (int64_t i = 1; i < rr - 1; ++i) perm.push_back(i);
  perm.push_back(0);
  perm.push_back(rr - 1);
  return Transpose(d, perm);
}

namespace {

// The convolution's window over its two spatial dims.
std::vector<WindowDim> Window(const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                              const std::vector<std::pair<int64_t, int64_t>>& pads,
                              const std::vector<int64_t>& lhs_dilate,
                              const std::vector<int64_t>& rhs_dilate) {
  std::vector<WindowDim> window(size.size());
  for (size_t i = 0; i < size.size(); ++i) {
    window[i].size = size[i];
    window[i].stride = stride[i];
    window[i].pad_low = pads[i].first;
    window[i].pad_high = pads[i].second;
    window[i].base_dilation = lhs_dilate[i];
    window[i].window_dilation = rhs_dilate[i];
  }
  return window;
}

// dim_labels as dimension numbers: `input` like "b01f", `kernel` like "01io", `output` like
// "b01f" (the rank-4 layouts the convolutions here use).
ConvDims Labels(std::string_view input, std::string_view kernel, std::string_view output) {
  ConvDims d;
  d.input_spatial.assign(2, 0);
  d.kernel_spatial.assign(2, 0);
  d.output_spatial.assign(2, 0);
  for (int64_t i = 0; i < 4; ++i) {
    const auto at = static_cast<size_t>(i);
    auto place = [&](char c, int64_t& a, char ca, int64_t& b, char cb, std::vector<int64_t>& sp) {
      if (c == ca) {
        a = i;
      } else if (c == cb) {
        b = i;
      } else {
        sp[static_cast<size_t>(c - '0')] = i;
      }
    };
    place(input[at], d.input_batch, 'b', d.input_feature, 'f', d.input_spatial);
    place(kernel[at], d.kernel_input_feature, 'i', d.kernel_output_feature, 'o', d.kernel_spatial);
    place(output[at], d.output_batch, 'b', d.output_feature, 'f', d.output_spatial);
  }
  return d;
}

// Sets a convolution's window and dim_labels.
OpLowerer::SetAttributes ConvAttributes(std::vector<WindowDim> window, ConvDims labels) {
  return [window = std::move(window), labels = std::move(labels)](Instruction& inst) {
    Attributes& a = inst.mutable_attrs();
    a.window = window;
    a.has_window = true;
    a.conv = labels;
  };
}

}  // namespace

LoweredValue OpLowerer::LowerConv(const Op& op, const LoweredValue& x, const LoweredValue& f) {
  const Conv2DParams& p = op.attrs.conv;
  const auto ph = ConvPads(x.dims[1], f.dims[0], p.stride_h, p, 0);
  const auto pw = ConvPads(x.dims[2], f.dims[1], p.stride_w, p, 1);
  return Infer("convolution", Opcode::kConvolution, {x, f},
               ConvAttributes(Window({f.dims[0], f.dims[1]}, {p.stride_h, p.stride_w}, {ph, pw},
                                     {1, 1}, {1, 1}),
                              Labels("b01f", "01io", "b01f")));
}

// dx = conv(dy dilated by the stride, the spatially reversed filter with in/out swapped), padded
// so that every input position gets the taps that read it (jax's
// _conv_general_dilated_transpose_lhs).
LoweredValue OpLowerer::LowerConvBackpropInput(const Op& op, const LoweredValue& f,
                                               const LoweredValue& dy) {
  const Conv2DParams& p = op.attrs.conv;
  const std::vector<int64_t>& x = op.attrs.shape.dims;  // the forward conv's input
  const int64_t stride[2] = {p.stride_h, p.stride_w};
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int d = 0; d < 2; ++d) {
    const int64_t lo = ConvPads(x[1 + d], f.dims[d], stride[d], p, d).first;
    const int64_t out = dy.dims[1 + d];
    pads.emplace_back(f.dims[d] - 1 - lo, x[1 + d] - 1 - (out - 1) * stride[d] + lo);
  }
  const LoweredValue rev = Infer("reverse", Opcode::kReverse, {f}, [](Instruction& inst) {
    inst.dimensions = {0, 1};
    inst.has_dimensions = true;
  });
  return Infer(
      "convolution", Opcode::kConvolution, {dy, rev},
      ConvAttributes(Window({f.dims[0], f.dims[1]}, {1, 1}, pads, {stride[0], stride[1]}, {1, 1}),
                     Labels("b01f", "01oi", "b01f")));
}

// dfilter = conv(x with batch and feature swapped, dy as the kernel dilated by the stride)
// (jax's _conv_general_dilated_transpose_rhs); the high pad makes the result the filter's size
// and is negative when the forward conv left trailing input rows unread.
LoweredValue OpLowerer::LowerConvBackpropFilter(const Op& op, const LoweredValue& x,
                                                const LoweredValue& dy) {
  const Conv2DParams& p = op.attrs.conv;
  const std::vector<int64_t>& f = op.attrs.shape.dims;  // the forward conv's filter
  const int64_t stride[2] = {p.stride_h, p.stride_w};
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int d = 0; d < 2; ++d) {
    const int64_t lo = ConvPads(x.dims[1 + d], f[d], stride[d], p, d).first;
    const int64_t out = dy.dims[1 + d];
    pads.emplace_back(lo, f[d] + (out - 1) * stride[d] - x.dims[1 + d] - lo);
  }
  return Infer(
      "convolution", Opcode::kConvolution, {x, dy},
      ConvAttributes(Window({dy.dims[1], dy.dims[2]}, {1, 1}, pads, {1, 1}, {stride[0], stride[1]}),
                     Labels("f01b", "i01o", "01bf")));
}

// 0.5·v·(1 + tanh(c·(v + a·v·v·v))), in GeluArray's order: ((a·v)·v)·v, then (0.5·v)·(...).
// One emitting call per statement (no call whose arguments both emit): C++ leaves the order of a
// call's arguments to the compiler, and the text must not depend on which compiler built it
// (engine/hlo/fused_kernels.cpp matches these expressions instruction by instruction).
LoweredValue OpLowerer::GeluTanh(const LoweredValue& v) {
  auto c = [&](double k) { return Splat(PrimitiveType::kF32, k, v.dims); };
  const LoweredValue cube = Map(
      Opcode::kMultiply, Map(Opcode::kMultiply, Map(Opcode::kMultiply, c(kLowerGeluA), v), v), v);
  const LoweredValue inner = Map(Opcode::kAdd, v, cube);
  return Map(Opcode::kTanh, Map(Opcode::kMultiply, c(kLowerGeluC), inner));
}

LoweredValue OpLowerer::LowerGelu(const LoweredValue& x) {
  const LoweredValue v = Convert(x, PrimitiveType::kF32);
  auto c = [&](double k) { return Splat(PrimitiveType::kF32, k, v.dims); };
  const LoweredValue t = GeluTanh(v);
  const LoweredValue one_plus_t = Map(Opcode::kAdd, c(1), t);
  const LoweredValue half_v = Map(Opcode::kMultiply, c(0.5), v);
  return Convert(Map(Opcode::kMultiply, half_v, one_plus_t), x.type);
}

// dy·(0.5·(1 + t) + 0.5·v·(1 − t²)·c·(1 + 3a·v²)), in GeluGradArray's order.
LoweredValue OpLowerer::LowerGeluGrad(const LoweredValue& x, const LoweredValue& dy) {
  const LoweredValue v = Convert(x, PrimitiveType::kF32);
  auto c = [&](double k) { return Splat(PrimitiveType::kF32, k, v.dims); };
  const LoweredValue t = GeluTanh(v);
  const LoweredValue one_plus_t = Map(Opcode::kAdd, c(1), t);
  const LoweredValue left = Map(Opcode::kMultiply, c(0.5), one_plus_t);
  const LoweredValue t2 = Map(Opcode::kMultiply, t, t);
  const LoweredValue sech2 = Map(Opcode::kSubtract, c(1), t2);
  const LoweredValue av2 =
      Map(Opcode::kMultiply, Map(Opcode::kMultiply, c(3.0f * kLowerGeluA), v), v);
  const LoweredValue poly = Map(Opcode::kAdd, c(1), av2);
  const LoweredValue half_v_sech2 =
      Map(Opcode::kMultiply, Map(Opcode::kMultiply, c(0.5), v), sech2);
  const LoweredValue scaled = Map(Opcode::kMultiply, half_v_sech2, c(kLowerGeluC));
  const LoweredValue d = Map(Opcode::kAdd, left, Map(Opcode::kMultiply, scaled, poly));
  const LoweredValue dy32 = Convert(dy, PrimitiveType::kF32);
  return Convert(Map(Opcode::kMultiply, dy32, d), x.type);
}

// exp(x − max) / Σ exp(x − max) along the axis (jax.nn.softmax), in f32.
LoweredValue OpLowerer::LowerSoftmax(const Op& op, const LoweredValue& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
  const LoweredValue v = Convert(x, PrimitiveType::kF32);
  const LoweredValue mx = Unreduce(Reduce(v, {axis}, /*max=*/true), v.dims, axis);
  const LoweredValue e = Map(Opcode::kExp, Map(Opcode::kSubtract, v, mx));
  const LoweredValue sum = Unreduce(Reduce(e, {axis}, /*max=*/false), v.dims, axis);
  return Convert(Map(Opcode::kDivide, e, sum), x.type);
}

// sum/max/mean over the axes; bf16 sums accumulate in f32 (as the native double accumulator and
// XLA on TPU do); keep_dims is a reshape of the reduced value.
LoweredValue OpLowerer::LowerReduce(const Op& op, const LoweredValue& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::set<int64_t> axis_set;
  for (int64_t a : op.attrs.axes) axis_set.insert(a < 0 ? a + rank : a);
  if (op.attrs.axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axis_set.insert(i);
  }
  const std::vector<int64_t> axes(axis_set.begin(), axis_set.end());
  const bool max = op.attrs.reduce == ReduceKind::kMax;
  const LoweredValue v = max ? x : Convert(x, PrimitiveType::kF32);
  LoweredValue r = Reduce(v, axes, max);
  if (op.attrs.reduce == ReduceKind::kMean) {
    int64_t count = 1;
    for (int64_t a : axes) count *= x.dims[static_cast<size_t>(a)];
    r = Map(Opcode::kDivide, r, Splat(r.type, static_cast<double>(count), r.dims));
  }
  if (op.attrs.keep_dims) {
    std::vector<int64_t> kept = x.dims;
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    r = Reshape(r, kept);
  }
  return Convert(r, x.type);
}

LoweredValue OpLowerer::LowerBroadcast(const Op& op, const LoweredValue& x) {
  std::vector<int64_t> mapping(x.dims.size());
  if (op.attrs.broadcast_dims) {
    mapping = *op.attrs.broadcast_dims;
  } else {
    std::iota(mapping.begin(), mapping.end(),
              static_cast<int64_t>(op.attrs.shape.dims.size() - x.dims.size()));
  }
  return BroadcastInDim(x, op.attrs.shape.dims, mapping);
}

// logits [b,c], labels s32[b]. log_softmax = (x − max) − log Σ exp(x − max); the one-hot by
// iota == label; loss = mean over rows of −log_softmax[label]; grad = (softmax − onehot) / b.
LoweredValue OpLowerer::LowerCrossEntropy(const Op& op, const LoweredValue& logits,
                                          const LoweredValue& labels) {
  const std::vector<int64_t>& dims = logits.dims;
  const double batch = static_cast<double>(dims[0]);
  const LoweredValue v = Convert(logits, PrimitiveType::kF32);
  const LoweredValue shifted = Map(Opcode::kSubtract, v, Unreduce(Reduce(v, {1}, true), dims, 1));
  const LoweredValue e = Map(Opcode::kExp, shifted);
  const LoweredValue sum = Reduce(e, {1}, false);
  const LoweredValue iota = Emit("iota", PrimitiveType::kS32, dims, Opcode::kIota, {},
                                 [](Instruction& inst) { inst.index = 1; });
  const LoweredValue hot = Compare(Direction::kEq, iota, BroadcastInDim(labels, dims, {0}));
  const LoweredValue zeros = Splat(PrimitiveType::kF32, 0, dims);
  if (op.kind == OpKind::kSoftmaxCrossEntropyGrad) {
    const LoweredValue p = Map(Opcode::kDivide, e, Unreduce(sum, dims, 1));
    const LoweredValue onehot = Select(hot, Splat(PrimitiveType::kF32, 1, dims), zeros);
    const LoweredValue scale =
        Splat(PrimitiveType::kF32, batch, dims);  // one emitting argument per call
    const LoweredValue g = Map(Opcode::kDivide, Map(Opcode::kSubtract, p, onehot), scale);
    return Convert(g, logits.type);
  }
  const LoweredValue log_softmax =
      Map(Opcode::kSubtract, shifted, Unreduce(Map(Opcode::kLog, sum), dims, 1));
  // select, not multiply by the one-hot: a -inf log-probability off the label must not make NaN.
  const LoweredValue picked = Reduce(Select(hot, log_softmax, zeros), {1}, false);
  const LoweredValue total = Reduce(Map(Opcode::kNegate, picked), {0}, false);
  return Map(Opcode::kDivide, total, Splat(PrimitiveType::kF32, batch, {}));
}

}  // namespace tpuemu::engine::hlo::op_lowering_internal
