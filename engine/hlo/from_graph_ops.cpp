// The composite ops of LowerGraph (from_graph_internal.h), each as JAX traces it
// (jnp.matmul/einsum, lax.conv_general_dilated and its transpose rules,
// jax.nn.gelu(approximate=True), jax.nn.softmax, an optax-style cross-entropy), with the native
// kernels' order of operations (engine/vector_math.cpp, tests/engine/reference/kernels.cpp) so the
// stacks round alike.
#include <algorithm>
#include <numeric>
#include <set>

#include "engine/hlo/from_graph_internal.h"

namespace tpuemu::engine::hlo::from_graph_internal {
namespace {

// The constants of the tanh-approximate gelu, as float (engine/vector_math.cpp kGeluC/kGeluA).
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
LoweredValue GraphLowerer::LowerDot(const Op& op, const LoweredValue& l, const LoweredValue& r) {
  const int64_t lr = static_cast<int64_t>(l.dims.size()), rr = static_cast<int64_t>(r.dims.size());
  const int64_t lc = op.attrs.transpose_lhs ? lr - 2 : lr - 1;
  const int64_t rc = op.attrs.transpose_rhs ? rr - 1 : rr - 2;
  const std::string contracting = "lhs_contracting_dims={" + std::to_string(lc) +
                                  "}, rhs_contracting_dims={" + std::to_string(rc) + "}";
  const std::string type = HloType(op.dtype);
  if (lr == rr) {
    std::vector<int64_t> batch(static_cast<size_t>(lr - 2));
    std::iota(batch.begin(), batch.end(), 0);
    const std::string b = JoinInts(batch);
    // XLA prints lhs_batch, lhs_contracting, rhs_batch, rhs_contracting.
    const std::string attrs = batch.empty()
                                  ? ", " + contracting
                                  : ", lhs_batch_dims={" + b + "}, lhs_contracting_dims={" +
                                        std::to_string(lc) + "}, rhs_batch_dims={" + b +
                                        "}, rhs_contracting_dims={" + std::to_string(rc) + "}";
    return Emit("dot", type, op.shape.dims, "dot", {l, r}, attrs);
  }
  if (rr == 2) return Emit("dot", type, op.shape.dims, "dot", {l, r}, ", " + contracting);
  // lhs [m, k] shared: the dot gives [m, batch..., n]; move m behind the batch dims.
  std::vector<int64_t> dot_dims{op.shape.dims[static_cast<size_t>(rr - 2)]};
  dot_dims.insert(dot_dims.end(), op.shape.dims.begin(), op.shape.dims.end() - 2);
  dot_dims.push_back(op.shape.dims.back());
  const LoweredValue d = Emit("dot", type, dot_dims, "dot", {l, r}, ", " + contracting);
  std::vector<int64_t> perm;
  for (int64_t i = 1; i < rr - 1; ++i) perm.push_back(i);
  perm.push_back(0);
  perm.push_back(rr - 1);
  return Transpose(d, perm);
}

namespace {

std::string WindowText(const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                       const std::vector<std::pair<int64_t, int64_t>>& pads,
                       const std::vector<int64_t>& lhs_dilate,
                       const std::vector<int64_t>& rhs_dilate) {
  auto ones = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
  };
  std::string s = ", window={size=" + JoinInts(size, "x");
  if (!ones(stride)) s += " stride=" + JoinInts(stride, "x");
  bool padded = false;
  std::string pad;
  for (size_t i = 0; i < pads.size(); ++i) {
    padded |= pads[i].first != 0 || pads[i].second != 0;
    pad += (i ? "x" : "") + std::to_string(pads[i].first) + "_" + std::to_string(pads[i].second);
  }
  if (padded) s += " pad=" + pad;
  if (!ones(lhs_dilate)) s += " lhs_dilate=" + JoinInts(lhs_dilate, "x");
  if (!ones(rhs_dilate)) s += " rhs_dilate=" + JoinInts(rhs_dilate, "x");
  return s + "}";
}

}  // namespace

LoweredValue GraphLowerer::LowerConv(const Op& op, const LoweredValue& x, const LoweredValue& f) {
  const Conv2DParams& p = op.attrs.conv;
  const auto ph = ConvPads(x.dims[1], f.dims[0], p.stride_h, p, 0);
  const auto pw = ConvPads(x.dims[2], f.dims[1], p.stride_w, p, 1);
  return Emit(
      "convolution", HloType(op.dtype), op.shape.dims, "convolution", {x, f},
      WindowText({f.dims[0], f.dims[1]}, {p.stride_h, p.stride_w}, {ph, pw}, {1, 1}, {1, 1}) +
          ", dim_labels=b01f_01io->b01f");
}

// dx = conv(dy dilated by the stride, the spatially reversed filter with in/out swapped), padded
// so that every input position gets the taps that read it (jax's
// _conv_general_dilated_transpose_lhs).
LoweredValue GraphLowerer::LowerConvBackpropInput(const Op& op, const LoweredValue& f,
                                                  const LoweredValue& dy) {
  const Conv2DParams& p = op.attrs.conv;
  const std::vector<int64_t>& x = op.shape.dims;
  const int64_t stride[2] = {p.stride_h, p.stride_w};
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int d = 0; d < 2; ++d) {
    const int64_t lo = ConvPads(x[1 + d], f.dims[d], stride[d], p, d).first;
    const int64_t out = dy.dims[1 + d];
    pads.emplace_back(f.dims[d] - 1 - lo, x[1 + d] - 1 - (out - 1) * stride[d] + lo);
  }
  const LoweredValue rev = Emit("reverse", f.type, f.dims, "reverse", {f}, ", dimensions={0,1}");
  return Emit("convolution", HloType(op.dtype), x, "convolution", {dy, rev},
              WindowText({f.dims[0], f.dims[1]}, {1, 1}, pads, {stride[0], stride[1]}, {1, 1}) +
                  ", dim_labels=b01f_01oi->b01f");
}

// dfilter = conv(x with batch and feature swapped, dy as the kernel dilated by the stride)
// (jax's _conv_general_dilated_transpose_rhs); the high pad makes the result the filter's size
// and is negative when the forward conv left trailing input rows unread.
LoweredValue GraphLowerer::LowerConvBackpropFilter(const Op& op, const LoweredValue& x,
                                                   const LoweredValue& dy) {
  const Conv2DParams& p = op.attrs.conv;
  const std::vector<int64_t>& f = op.shape.dims;
  const int64_t stride[2] = {p.stride_h, p.stride_w};
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int d = 0; d < 2; ++d) {
    const int64_t lo = ConvPads(x.dims[1 + d], f[d], stride[d], p, d).first;
    const int64_t out = dy.dims[1 + d];
    pads.emplace_back(lo, f[d] + (out - 1) * stride[d] - x.dims[1 + d] - lo);
  }
  return Emit("convolution", HloType(op.dtype), f, "convolution", {x, dy},
              WindowText({dy.dims[1], dy.dims[2]}, {1, 1}, pads, {1, 1}, {stride[0], stride[1]}) +
                  ", dim_labels=f01b_i01o->01bf");
}

// 0.5·v·(1 + tanh(c·(v + a·v·v·v))), in GeluArray's order: ((a·v)·v)·v, then (0.5·v)·(...).
// One emitting call per statement (no call whose arguments both emit): C++ leaves the order of a
// call's arguments to the compiler, and the text must not depend on which compiler built it
// (engine/hlo/fused_kernels.cpp matches these expressions instruction by instruction).
LoweredValue GraphLowerer::LowerGelu(const LoweredValue& x) {
  const LoweredValue v = Convert(x, "f32");
  auto c = [&](double k) { return Splat("f32", k, v.dims); };
  const LoweredValue cube =
      Map("multiply", Map("multiply", Map("multiply", c(kLowerGeluA), v), v), v);
  const LoweredValue inner = Map("add", v, cube);
  const LoweredValue t = Map("tanh", Map("multiply", c(kLowerGeluC), inner));
  const LoweredValue one_plus_t = Map("add", c(1), t);
  const LoweredValue half_v = Map("multiply", c(0.5), v);
  return Convert(Map("multiply", half_v, one_plus_t), x.type);
}

// dy·(0.5·(1 + t) + 0.5·v·(1 − t²)·c·(1 + 3a·v²)), in GeluGradArray's order.
LoweredValue GraphLowerer::LowerGeluGrad(const LoweredValue& x, const LoweredValue& dy) {
  const LoweredValue v = Convert(x, "f32");
  auto c = [&](double k) { return Splat("f32", k, v.dims); };
  const LoweredValue cube =
      Map("multiply", Map("multiply", Map("multiply", c(kLowerGeluA), v), v), v);
  const LoweredValue inner = Map("add", v, cube);
  const LoweredValue t = Map("tanh", Map("multiply", c(kLowerGeluC), inner));
  const LoweredValue one_plus_t = Map("add", c(1), t);
  const LoweredValue left = Map("multiply", c(0.5), one_plus_t);
  const LoweredValue t2 = Map("multiply", t, t);
  const LoweredValue sech2 = Map("subtract", c(1), t2);
  const LoweredValue av2 = Map("multiply", Map("multiply", c(3.0f * kLowerGeluA), v), v);
  const LoweredValue poly = Map("add", c(1), av2);
  const LoweredValue half_v_sech2 = Map("multiply", Map("multiply", c(0.5), v), sech2);
  const LoweredValue scaled = Map("multiply", half_v_sech2, c(kLowerGeluC));
  const LoweredValue d = Map("add", left, Map("multiply", scaled, poly));
  const LoweredValue dy32 = Convert(dy, "f32");
  return Convert(Map("multiply", dy32, d), x.type);
}

// exp(x − max) / Σ exp(x − max) along the axis (jax.nn.softmax), in f32.
LoweredValue GraphLowerer::LowerSoftmax(const Op& op, const LoweredValue& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
  const LoweredValue v = Convert(x, "f32");
  const LoweredValue mx = Unreduce(Reduce(v, {axis}, /*max=*/true), v.dims, axis);
  const LoweredValue e = Map("exponential", Map("subtract", v, mx));
  const LoweredValue sum = Unreduce(Reduce(e, {axis}, /*max=*/false), v.dims, axis);
  return Convert(Map("divide", e, sum), x.type);
}

// sum/max/mean over the axes; bf16 sums accumulate in f32 (as the native double accumulator and
// XLA on TPU do); keep_dims is a reshape of the reduced value.
LoweredValue GraphLowerer::LowerReduce(const Op& op, const LoweredValue& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::set<int64_t> axis_set;
  for (int64_t a : op.attrs.axes) axis_set.insert(a < 0 ? a + rank : a);
  if (op.attrs.axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axis_set.insert(i);
  }
  const std::vector<int64_t> axes(axis_set.begin(), axis_set.end());
  const bool max = op.attrs.reduce == ReduceKind::kMax;
  const LoweredValue v = max ? x : Convert(x, "f32");
  LoweredValue r = Reduce(v, axes, max);
  if (op.attrs.reduce == ReduceKind::kMean) {
    int64_t count = 1;
    for (int64_t a : axes) count *= x.dims[static_cast<size_t>(a)];
    r = Map("divide", r, Splat(r.type, static_cast<double>(count), r.dims));
  }
  if (op.attrs.keep_dims) r = Reshape(r, op.shape.dims);
  return Convert(r, x.type);
}

LoweredValue GraphLowerer::LowerBroadcast(const Op& op, const LoweredValue& x) {
  std::vector<int64_t> mapping(x.dims.size());
  if (op.attrs.broadcast_dims) {
    mapping = *op.attrs.broadcast_dims;
  } else {
    std::iota(mapping.begin(), mapping.end(),
              static_cast<int64_t>(op.shape.dims.size() - x.dims.size()));
  }
  return BroadcastInDim(x, op.shape.dims, mapping);
}

// logits [b,c], labels s32[b]. log_softmax = (x − max) − log Σ exp(x − max); the one-hot by
// iota == label; loss = mean over rows of −log_softmax[label]; grad = (softmax − onehot) / b.
LoweredValue GraphLowerer::LowerCrossEntropy(const Op& op, const LoweredValue& logits,
                                             const LoweredValue& labels) {
  const std::vector<int64_t>& dims = logits.dims;
  const double batch = static_cast<double>(dims[0]);
  const LoweredValue v = Convert(logits, "f32");
  const LoweredValue shifted = Map("subtract", v, Unreduce(Reduce(v, {1}, true), dims, 1));
  const LoweredValue e = Map("exponential", shifted);
  const LoweredValue sum = Reduce(e, {1}, false);
  const LoweredValue iota = Emit("iota", "s32", dims, "iota", {}, ", iota_dimension=1");
  const LoweredValue hot = Emit("compare", "pred", dims, "compare",
                                {iota, BroadcastInDim(labels, dims, {0})}, ", direction=EQ");
  const LoweredValue zeros = Splat("f32", 0, dims);
  if (op.kind == OpKind::kSoftmaxCrossEntropyGrad) {
    const LoweredValue p = Map("divide", e, Unreduce(sum, dims, 1));
    const LoweredValue onehot =
        Emit("select", "f32", dims, "select", {hot, Splat("f32", 1, dims), zeros});
    const LoweredValue scale = Splat("f32", batch, dims);  // one emitting argument per call
    const LoweredValue g = Map("divide", Map("subtract", p, onehot), scale);
    return Convert(g, logits.type);
  }
  const LoweredValue log_softmax = Map("subtract", shifted, Unreduce(Map("log", sum), dims, 1));
  // select, not multiply by the one-hot: a -inf log-probability off the label must not make NaN.
  const LoweredValue picked =
      Reduce(Emit("select", "f32", dims, "select", {hot, log_softmax, zeros}), {1}, false);
  const LoweredValue total = Reduce(Map("negate", picked), {0}, false);
  return Map("divide", total, Splat("f32", batch, {}));
}

}  // namespace tpuemu::engine::hlo::from_graph_internal
