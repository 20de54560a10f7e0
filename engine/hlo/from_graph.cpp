// LowerGraph (from_graph.h): an emitter of entry instructions and one function per op kind. Each
// function writes the HLO JAX would trace for the op (jnp.matmul/einsum, lax.conv_general_dilated
// and its transpose rules, jax.nn.gelu(approximate=True), jax.nn.softmax, optax-style
// cross-entropy); composite formulas keep the native kernels' order of operations
// (engine/vector_math.cpp, engine/kernels.cpp) so the two stacks round alike.
#include "engine/hlo/from_graph.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

namespace tpuemu::engine::hlo {
namespace {

// The constants of the tanh-approximate gelu, as float (engine/vector_math.cpp kGeluC/kGeluA).
constexpr float kLowerGeluC = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kLowerGeluA = 0.044715f;

std::string HloType(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return "bf16";
    case DType::kI32:
      return "s32";
    case DType::kF32:
      break;
  }
  return "f32";
}

std::string JoinInts(const std::vector<int64_t>& v, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

// "f32[2,3]{1,0}": XLA prints the default (row-major) layout on every array shape.
std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  std::string s = type + "[" + JoinInts(dims) + "]";
  if (dims.empty()) return s;
  std::vector<int64_t> layout(dims.size());
  std::iota(layout.rbegin(), layout.rend(), 0);
  return s + "{" + JoinInts(layout) + "}";
}

// An HLO identifier ([A-Za-z_][A-Za-z0-9_.-]*) close to `id`.
std::string Identifier(std::string_view id) {
  std::string s;
  for (char c : id) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    s += ok ? c : '_';
  }
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) s = "_" + s;
  return s;
}

std::string Quoted(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// A float literal that reads back to the same f32 (9 significant digits), or inf/-inf.
std::string FloatLiteral(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(static_cast<float>(v)));
  return buf;
}

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

struct LoweredValue {
  int index = -1;  // into the entry's instructions
  std::string type;
  std::vector<int64_t> dims;
};

struct LoweredInstruction {
  std::string name;
  std::string shape;
  std::string opcode;
  std::vector<int> operands;  // indices of earlier instructions
  std::string literal;        // parameter(N), constant(V) and iota() have no operands
  std::string attrs;          // ", dimensions={1}" ...
  std::string op_name;        // metadata; empty for none
};

class GraphLowerer {
 public:
  explicit GraphLowerer(const Graph& graph) : graph_(graph) {}

  Result<GraphLowering> Run();

 private:
  // Appends an instruction named "<op>.<step>" and returns its value.
  LoweredValue Emit(const std::string& step, const std::string& type, std::vector<int64_t> dims,
                    const std::string& opcode, const std::vector<LoweredValue>& operands,
                    std::string attrs = "", std::string literal = "");
  std::string Unique(const std::string& name);

  // Building blocks, as jax.lax emits them.
  LoweredValue Splat(const std::string& type, double v, const std::vector<int64_t>& dims);
  LoweredValue BroadcastInDim(const LoweredValue& x, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& mapping);
  LoweredValue NumpyBroadcast(const LoweredValue& x, const std::vector<int64_t>& dims);
  LoweredValue Convert(const LoweredValue& x, const std::string& type);
  LoweredValue Map(const std::string& opcode, const LoweredValue& x);
  LoweredValue Map(const std::string& opcode, const LoweredValue& a, const LoweredValue& b);
  LoweredValue Reshape(const LoweredValue& x, const std::vector<int64_t>& dims);
  LoweredValue Transpose(const LoweredValue& x, const std::vector<int64_t>& perm);
  // reduce over `axes` with add (init 0) or maximum (init -inf).
  LoweredValue Reduce(const LoweredValue& x, const std::vector<int64_t>& axes, bool max);
  // x broadcast back along `axis` to `dims` (the shape x was reduced from).
  LoweredValue Unreduce(const LoweredValue& x, const std::vector<int64_t>& dims, int64_t axis);
  std::string Reducer(bool max, const std::string& type);

  // One per op kind (or family).
  Result<LoweredValue> LowerOp(const Op& op, const std::vector<LoweredValue>& in);
  LoweredValue LowerDot(const Op& op, const LoweredValue& l, const LoweredValue& r);
  LoweredValue LowerConv(const Op& op, const LoweredValue& x, const LoweredValue& f);
  LoweredValue LowerConvBackpropInput(const Op& op, const LoweredValue& f, const LoweredValue& dy);
  LoweredValue LowerConvBackpropFilter(const Op& op, const LoweredValue& x, const LoweredValue& dy);
  LoweredValue LowerGelu(const LoweredValue& x);
  LoweredValue LowerGeluGrad(const LoweredValue& x, const LoweredValue& dy);
  LoweredValue LowerSoftmax(const Op& op, const LoweredValue& x);
  LoweredValue LowerReduce(const Op& op, const LoweredValue& x);
  LoweredValue LowerBroadcast(const Op& op, const LoweredValue& x);
  LoweredValue LowerCrossEntropy(const Op& op, const LoweredValue& logits,
                                 const LoweredValue& labels);

  const Graph& graph_;
  std::vector<LoweredInstruction> entry_;
  std::set<std::string> used_names_;
  std::map<std::string, std::string> reducers_;  // computation name -> text
  std::map<std::string, LoweredValue> splats_;   // per op: one broadcast constant per value
  std::string current_;                          // the op being lowered: name and metadata
  std::string current_op_name_;
  int next_parameter_ = 0;
};

std::string GraphLowerer::Unique(const std::string& name) {
  std::string n = name;
  for (int k = 1; used_names_.count(n); ++k) n = name + "." + std::to_string(k);
  used_names_.insert(n);
  return n;
}

LoweredValue GraphLowerer::Emit(const std::string& step, const std::string& type,
                                std::vector<int64_t> dims, const std::string& opcode,
                                const std::vector<LoweredValue>& operands, std::string attrs,
                                std::string literal) {
  LoweredInstruction inst;
  inst.name = Unique(current_ + "." + step);
  inst.shape = ShapeText(type, dims);
  inst.opcode = opcode;
  for (const LoweredValue& v : operands) inst.operands.push_back(v.index);
  inst.literal = std::move(literal);
  inst.attrs = std::move(attrs);
  inst.op_name = current_op_name_;
  entry_.push_back(std::move(inst));
  return {static_cast<int>(entry_.size()) - 1, type, std::move(dims)};
}

LoweredValue GraphLowerer::Splat(const std::string& type, double v,
                                 const std::vector<int64_t>& dims) {
  const std::string literal = type == "s32" ? std::to_string(std::llround(v)) : FloatLiteral(v);
  const std::string key = type + " " + literal + " " + JoinInts(dims);
  if (auto it = splats_.find(key); it != splats_.end()) return it->second;
  LoweredValue c = Emit("constant", type, {}, "constant", {}, "", literal);
  if (!dims.empty()) c = Emit("broadcast", type, dims, "broadcast", {c}, ", dimensions={}");
  splats_[key] = c;
  return c;
}

LoweredValue GraphLowerer::BroadcastInDim(const LoweredValue& x, const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& mapping) {
  // XLA's broadcast maps operand dims onto equal result dims: a size-1 dim that expands is
  // reshaped away first (what jax.lax.broadcast_in_dim lowers to).
  std::vector<int64_t> kept_dims, kept_mapping;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (x.dims[i] == dims[static_cast<size_t>(mapping[i])]) {
      kept_dims.push_back(x.dims[i]);
      kept_mapping.push_back(mapping[i]);
    }
  }
  const LoweredValue y = kept_dims.size() == x.dims.size() ? x : Reshape(x, kept_dims);
  return Emit("broadcast", x.type, dims, "broadcast", {y},
              ", dimensions={" + JoinInts(kept_mapping) + "}");
}

LoweredValue GraphLowerer::NumpyBroadcast(const LoweredValue& x, const std::vector<int64_t>& dims) {
  if (x.dims == dims) return x;
  std::vector<int64_t> mapping(x.dims.size());
  std::iota(mapping.begin(), mapping.end(), static_cast<int64_t>(dims.size() - x.dims.size()));
  return BroadcastInDim(x, dims, mapping);
}

LoweredValue GraphLowerer::Convert(const LoweredValue& x, const std::string& type) {
  if (x.type == type) return x;
  return Emit("convert", type, x.dims, "convert", {x});
}

LoweredValue GraphLowerer::Map(const std::string& opcode, const LoweredValue& x) {
  return Emit(opcode, x.type, x.dims, opcode, {x});
}

LoweredValue GraphLowerer::Map(const std::string& opcode, const LoweredValue& a,
                               const LoweredValue& b) {
  return Emit(opcode, a.type, a.dims, opcode, {a, b});
}

LoweredValue GraphLowerer::Reshape(const LoweredValue& x, const std::vector<int64_t>& dims) {
  return Emit("reshape", x.type, dims, "reshape", {x});
}

LoweredValue GraphLowerer::Transpose(const LoweredValue& x, const std::vector<int64_t>& perm) {
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x.dims[static_cast<size_t>(p)]);
  return Emit("transpose", x.type, dims, "transpose", {x}, ", dimensions={" + JoinInts(perm) + "}");
}

std::string GraphLowerer::Reducer(bool max, const std::string& type) {
  const std::string name = std::string(max ? "max." : "add.") + type;
  const std::string opcode = max ? "maximum" : "add";
  reducers_[name] = name + " {\n  lhs = " + type + "[] parameter(0)\n  rhs = " + type +
                    "[] parameter(1)\n  ROOT " + opcode + " = " + type + "[] " + opcode +
                    "(lhs, rhs)\n}\n";
  return name;
}

LoweredValue GraphLowerer::Reduce(const LoweredValue& x, const std::vector<int64_t>& axes,
                                  bool max) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end()) {
      dims.push_back(x.dims[i]);
    }
  }
  const LoweredValue init = Splat(x.type, max ? -std::numeric_limits<double>::infinity() : 0.0, {});
  return Emit(max ? "reduce_max" : "reduce_sum", x.type, dims, "reduce", {x, init},
              ", dimensions={" + JoinInts(axes) + "}, to_apply=" + Reducer(max, x.type));
}

LoweredValue GraphLowerer::Unreduce(const LoweredValue& x, const std::vector<int64_t>& dims,
                                    int64_t axis) {
  std::vector<int64_t> mapping;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (i != axis) mapping.push_back(i);
  }
  return BroadcastInDim(x, dims, mapping);
}

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
    const auto [lo, hi] = ConvPads(x[1 + d], f.dims[d], stride[d], p, d);
    (void)hi;
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
    const auto [lo, hi] = ConvPads(x.dims[1 + d], f[d], stride[d], p, d);
    (void)hi;
    const int64_t out = dy.dims[1 + d];
    pads.emplace_back(lo, f[d] + (out - 1) * stride[d] - x.dims[1 + d] - lo);
  }
  return Emit("convolution", HloType(op.dtype), f, "convolution", {x, dy},
              WindowText({dy.dims[1], dy.dims[2]}, {1, 1}, pads, {1, 1}, {stride[0], stride[1]}) +
                  ", dim_labels=f01b_i01o->01bf");
}

// 0.5·v·(1 + tanh(c·(v + a·v·v·v))), in GeluArray's order: ((a·v)·v)·v, then (0.5·v)·(...).
LoweredValue GraphLowerer::LowerGelu(const LoweredValue& x) {
  const LoweredValue v = Convert(x, "f32");
  auto c = [&](double k) { return Splat("f32", k, v.dims); };
  const LoweredValue cube =
      Map("multiply", Map("multiply", Map("multiply", c(kLowerGeluA), v), v), v);
  const LoweredValue t = Map("tanh", Map("multiply", c(kLowerGeluC), Map("add", v, cube)));
  const LoweredValue y = Map("multiply", Map("multiply", c(0.5), v), Map("add", c(1), t));
  return Convert(y, x.type);
}

// dy·(0.5·(1 + t) + 0.5·v·(1 − t²)·c·(1 + 3a·v²)), in GeluGradArray's order.
LoweredValue GraphLowerer::LowerGeluGrad(const LoweredValue& x, const LoweredValue& dy) {
  const LoweredValue v = Convert(x, "f32");
  auto c = [&](double k) { return Splat("f32", k, v.dims); };
  const LoweredValue cube =
      Map("multiply", Map("multiply", Map("multiply", c(kLowerGeluA), v), v), v);
  const LoweredValue t = Map("tanh", Map("multiply", c(kLowerGeluC), Map("add", v, cube)));
  const LoweredValue left = Map("multiply", c(0.5), Map("add", c(1), t));
  const LoweredValue sech2 = Map("subtract", c(1), Map("multiply", t, t));
  const LoweredValue poly =
      Map("add", c(1), Map("multiply", Map("multiply", c(3.0f * kLowerGeluA), v), v));
  const LoweredValue right = Map(
      "multiply",
      Map("multiply", Map("multiply", Map("multiply", c(0.5), v), sech2), c(kLowerGeluC)), poly);
  const LoweredValue d = Map("add", left, right);
  return Convert(Map("multiply", Convert(dy, "f32"), d), x.type);
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
    const LoweredValue g = Map("divide", Map("subtract", p, onehot), Splat("f32", batch, dims));
    return Convert(g, logits.type);
  }
  const LoweredValue log_softmax = Map("subtract", shifted, Unreduce(Map("log", sum), dims, 1));
  // select, not multiply by the one-hot: a -inf log-probability off the label must not make NaN.
  const LoweredValue picked =
      Reduce(Emit("select", "f32", dims, "select", {hot, log_softmax, zeros}), {1}, false);
  const LoweredValue total = Reduce(Map("negate", picked), {0}, false);
  return Map("divide", total, Splat("f32", batch, {}));
}

Result<LoweredValue> GraphLowerer::LowerOp(const Op& op, const std::vector<LoweredValue>& in) {
  const std::string type = HloType(op.dtype);
  auto binary = [&](const char* opcode) {
    return Emit(opcode, type, op.shape.dims, opcode,
                {NumpyBroadcast(in[0], op.shape.dims), NumpyBroadcast(in[1], op.shape.dims)});
  };
  switch (op.kind) {
    case OpKind::kParameter:
    case OpKind::kConstant:
      return Emit("parameter", type, op.shape.dims, "parameter", {}, "",
                  std::to_string(next_parameter_++));
    case OpKind::kDot:
      return LowerDot(op, in[0], in[1]);
    case OpKind::kConv2D:
      return LowerConv(op, in[0], in[1]);
    case OpKind::kConv2DBackpropInput:
      return LowerConvBackpropInput(op, in[0], in[1]);
    case OpKind::kConv2DBackpropFilter:
      return LowerConvBackpropFilter(op, in[0], in[1]);
    case OpKind::kAdd:
      return binary("add");
    case OpKind::kSub:
      return binary("subtract");
    case OpKind::kMul:
      return binary("multiply");
    case OpKind::kDiv:
      return binary("divide");
    case OpKind::kMax:
      return binary("maximum");
    case OpKind::kMin:
      return binary("minimum");
    case OpKind::kNeg:
      return Map("negate", in[0]);
    case OpKind::kTanh:
      return Map("tanh", in[0]);
    case OpKind::kExp:
      return Map("exponential", in[0]);
    case OpKind::kLog:
      return Map("log", in[0]);
    case OpKind::kRsqrt:
      return Map("rsqrt", in[0]);
    case OpKind::kRelu:  // jax.nn.relu: max(x, 0)
      return Map("maximum", in[0], Splat(type, 0, in[0].dims));
    case OpKind::kGelu:
      return LowerGelu(in[0]);
    case OpKind::kReluGrad: {  // dy where x > 0 (jax's relu jvp), else 0
      const LoweredValue zeros = Splat(type, 0, in[0].dims);
      const LoweredValue positive =
          Emit("compare", "pred", in[0].dims, "compare", {in[0], zeros}, ", direction=GT");
      return Emit("select", type, in[0].dims, "select", {positive, in[1], zeros});
    }
    case OpKind::kGeluGrad:
      return LowerGeluGrad(in[0], in[1]);
    case OpKind::kSoftmax:
      return LowerSoftmax(op, in[0]);
    case OpKind::kReduce:
      return LowerReduce(op, in[0]);
    case OpKind::kBroadcast:
      return LowerBroadcast(op, in[0]);
    case OpKind::kReshape:
      return Reshape(in[0], op.shape.dims);
    case OpKind::kTranspose:
      return Transpose(in[0], op.attrs.perm);
    case OpKind::kConcat: {
      const int64_t rank = static_cast<int64_t>(op.shape.dims.size());
      const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
      return Emit("concatenate", type, op.shape.dims, "concatenate", in,
                  ", dimensions={" + std::to_string(axis) + "}");
    }
    case OpKind::kSlice: {
      std::string s;
      for (size_t d = 0; d < op.attrs.start.size(); ++d) {
        s += (d ? ", [" : "[") + std::to_string(op.attrs.start[d]) + ":" +
             std::to_string(op.attrs.limit[d]) + "]";
      }
      return Emit("slice", type, op.shape.dims, "slice", {in[0]}, ", slice={" + s + "}");
    }
    case OpKind::kConvert:  // always an instruction, even to the same type: the op has a name
      return Emit("convert", type, op.shape.dims, "convert", {in[0]});
    case OpKind::kSoftmaxCrossEntropy:
    case OpKind::kSoftmaxCrossEntropyGrad:
      return LowerCrossEntropy(op, in[0], in[1]);
  }
  return Status::InvalidArgument(std::string(OpKindName(op.kind)) + " \"" + op.id +
                                 "\": no HLO lowering for this op kind");
}

Result<GraphLowering> GraphLowerer::Run() {
  if (!graph_.status().ok()) {
    return Status::InvalidArgument("graph \"" + graph_.name() +
                                   "\" has an error: " + graph_.status().ToString());
  }
  GraphLowering out;
  const std::vector<Op>& ops = graph_.ops();
  // Op ids keep their names even when a helper instruction was named first.
  std::vector<std::string> names;
  for (const Op& op : ops) names.push_back(Unique(Identifier(op.id)));
  std::vector<LoweredValue> values;
  std::vector<std::string> parameter_shapes;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    current_ = names[i];
    current_op_name_ = graph_.name() + "/" + op.id;
    splats_.clear();
    std::vector<LoweredValue> in;
    for (int k : op.input_index) in.push_back(values[static_cast<size_t>(k)]);
    const size_t first = entry_.size();
    Result<LoweredValue> v = LowerOp(op, in);
    if (!v.ok()) return v.status();
    if (v->index < static_cast<int>(first)) *v = Emit("copy", v->type, v->dims, "copy", {*v});
    entry_[static_cast<size_t>(v->index)].name = names[i];
    values.push_back(*v);
    if (op.kind == OpKind::kParameter || op.kind == OpKind::kConstant) {
      out.parameters.push_back(op.id);
      parameter_shapes.push_back(ShapeText(v->type, v->dims));
    }
  }
  // The ROOT tuple, outside any op.
  current_ = "tuple";
  current_op_name_.clear();
  LoweredInstruction root;
  root.name = Unique("tuple");
  root.opcode = "tuple";
  std::string result_shape;
  for (const std::string& id : graph_.outputs()) {
    const LoweredValue& v = values[static_cast<size_t>(graph_.IndexOf(id))];
    root.operands.push_back(v.index);
    result_shape += (result_shape.empty() ? "" : ", ") + ShapeText(v.type, v.dims);
    out.outputs.push_back(id);
  }
  root.shape = "(" + result_shape + ")";
  entry_.push_back(std::move(root));

  std::ostringstream text;
  std::string params;
  for (const std::string& s : parameter_shapes) params += (params.empty() ? "" : ", ") + s;
  text << "HloModule " << Identifier(graph_.name()) << ", entry_computation_layout={(" << params
       << ")->(" << result_shape << ")}\n\n";
  for (const auto& [name, computation] : reducers_) text << computation << "\n";
  text << "ENTRY main {\n";
  for (size_t i = 0; i < entry_.size(); ++i) {
    const LoweredInstruction& inst = entry_[i];
    text << (i + 1 == entry_.size() ? "  ROOT " : "  ") << inst.name << " = " << inst.shape << " "
         << inst.opcode << "(";
    for (size_t k = 0; k < inst.operands.size(); ++k) {
      text << (k ? ", " : "") << entry_[static_cast<size_t>(inst.operands[k])].name;
    }
    text << inst.literal << ")" << inst.attrs;
    if (!inst.op_name.empty()) text << ", metadata={op_name=" << Quoted(inst.op_name) << "}";
    text << "\n";
  }
  text << "}\n";
  out.text = text.str();
  return out;
}

}  // namespace

Result<GraphLowering> LowerGraph(const Graph& graph) { return GraphLowerer(graph).Run(); }

}  // namespace tpuemu::engine::hlo
