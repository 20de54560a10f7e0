// Vector-unit kernels (elementwise, reductions, softmax, data movement), RunKernel dispatch, and
// Init materialisation.
#include "engine/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

namespace tpuemu::engine {
namespace {

std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(static_cast<size_t>(s.rank()), 1);
  for (int i = s.rank() - 2; i >= 0; --i) {
    st[static_cast<size_t>(i)] = st[static_cast<size_t>(i) + 1] * s.dim(i + 1);
  }
  return st;
}

// Visits every index of `shape` in row-major order, calling fn(out_linear, in_offset) where
// in_offset = base + Σ index[d]·in_strides[d] (stride 0 broadcasts a dim).
template <typename Fn>
void ForEachOffset(const Shape& shape, const std::vector<int64_t>& in_strides, int64_t base,
                   Fn&& fn) {
  const int64_t total = shape.NumElements();
  if (total == 0) return;
  const int rank = shape.rank();
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  int64_t off = base;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, off);
    for (int d = rank - 1; d >= 0; --d) {
      const size_t du = static_cast<size_t>(d);
      if (++idx[du] < shape.dim(d)) {
        off += in_strides[du];
        break;
      }
      off -= in_strides[du] * (idx[du] - 1);
      idx[du] = 0;
    }
  }
}

// Strides of `in` seen through numpy broadcasting to `out` (0 where in's dim is 1 or absent).
std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out) {
  const auto st = Strides(in);
  std::vector<int64_t> r(static_cast<size_t>(out.rank()), 0);
  for (int i = 0; i < in.rank(); ++i) {
    const int o = out.rank() - in.rank() + i;
    if (in.dim(i) != 1) r[static_cast<size_t>(o)] = st[static_cast<size_t>(i)];
  }
  return r;
}

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

// out[i] = in[offset(i)] for a strided view; works for f32/bf16 and int32.
void Gather(const Tensor& in, Tensor& out, const std::vector<int64_t>& strides, int64_t base) {
  if (in.dtype() == DType::kI32) {
    const int32_t* src = in.i32();
    int32_t* dst = out.i32();
    ForEachOffset(out.shape(), strides, base, [&](int64_t i, int64_t o) { dst[i] = src[o]; });
  } else {
    const float* src = in.f32();
    float* dst = out.f32();
    ForEachOffset(out.shape(), strides, base, [&](int64_t i, int64_t o) { dst[i] = src[o]; });
  }
}

float ApplyBinary(OpKind kind, float a, float b) {
  switch (kind) {
    case OpKind::kAdd:
      return a + b;
    case OpKind::kSub:
      return a - b;
    case OpKind::kMul:
      return a * b;
    case OpKind::kDiv:
      return a / b;
    case OpKind::kMax:
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN()
                                            : std::max(a, b);
    default:
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN()
                                            : std::min(a, b);
  }
}

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluA = 0.044715f;

float ApplyUnary(OpKind kind, float x) {
  switch (kind) {
    case OpKind::kNeg:
      return -x;
    case OpKind::kRelu:
      return x > 0 ? x : 0.0f;
    case OpKind::kGelu:  // jax.nn.gelu(approximate=True)
      return 0.5f * x * (1.0f + std::tanh(kGeluC * (x + kGeluA * x * x * x)));
    case OpKind::kTanh:
      return std::tanh(x);
    case OpKind::kExp:
      return std::exp(x);
    case OpKind::kLog:
      return std::log(x);
    default:
      return 1.0f / std::sqrt(x);  // rsqrt
  }
}

float GeluDerivative(float x) {
  const float u = kGeluC * (x + kGeluA * x * x * x);
  const float t = std::tanh(u);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * kGeluA * x * x);
}

void Binary(const Op& op, const Tensor& a, const Tensor& b, Tensor& out) {
  float* o = out.f32();
  const float* pa = a.f32();
  const float* pb = b.f32();
  const int64_t n = out.num_elements();
  if (a.shape() == out.shape() && b.shape() == out.shape()) {
    for (int64_t i = 0; i < n; ++i) o[i] = ApplyBinary(op.kind, pa[i], pb[i]);
    return;
  }
  if (a.shape() == out.shape() && b.num_elements() == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = ApplyBinary(op.kind, pa[i], pb[0]);
    return;
  }
  // General broadcasting: gather b's offsets alongside a's.
  std::vector<int64_t> a_off(static_cast<size_t>(n));
  ForEachOffset(out.shape(), BroadcastStrides(a.shape(), out.shape()), 0,
                [&](int64_t i, int64_t off) { a_off[static_cast<size_t>(i)] = off; });
  ForEachOffset(out.shape(), BroadcastStrides(b.shape(), out.shape()), 0,
                [&](int64_t i, int64_t off) {
                  o[i] = ApplyBinary(op.kind, pa[a_off[static_cast<size_t>(i)]], pb[off]);
                });
}

// Splits a shape around `axis` into outer · len · inner.
void AroundAxis(const Shape& s, int64_t axis, int64_t* outer, int64_t* len, int64_t* inner) {
  *outer = 1, *inner = 1;
  for (int i = 0; i < axis; ++i) *outer *= s.dim(i);
  *len = s.dim(static_cast<int>(axis));
  for (int i = static_cast<int>(axis) + 1; i < s.rank(); ++i) *inner *= s.dim(i);
}

void Softmax(const Op& op, const Tensor& x, Tensor& out) {
  const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + x.shape().rank() : op.attrs.axis;
  int64_t outer, len, inner;
  AroundAxis(x.shape(), axis, &outer, &len, &inner);
  const float* in = x.f32();
  float* o = out.f32();
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < inner; ++b) {
      const int64_t base = a * len * inner + b;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < len; ++j) mx = std::max(mx, in[base + j * inner]);
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) {
        const float e = std::exp(in[base + j * inner] - mx);
        o[base + j * inner] = e;
        sum += e;
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t j = 0; j < len; ++j) o[base + j * inner] *= inv;
    }
  }
}

void Reduce(const Op& op, const Tensor& x, Tensor& out) {
  const Shape& in = x.shape();
  std::vector<bool> reduced(static_cast<size_t>(in.rank()), op.attrs.axes.empty());
  for (int64_t a : op.attrs.axes) reduced[static_cast<size_t>(a < 0 ? a + in.rank() : a)] = true;
  // Output strides laid over the input's dims (0 on reduced dims).
  std::vector<int64_t> kept_dims;
  for (int i = 0; i < in.rank(); ++i) {
    if (!reduced[static_cast<size_t>(i)]) kept_dims.push_back(in.dim(i));
  }
  const auto kept_strides = Strides(Shape(kept_dims));
  std::vector<int64_t> strides(static_cast<size_t>(in.rank()), 0);
  for (int i = 0, k = 0; i < in.rank(); ++i) {
    if (!reduced[static_cast<size_t>(i)]) strides[static_cast<size_t>(i)] = kept_strides[k++];
  }
  const int64_t n_out = out.num_elements();
  const bool is_max = op.attrs.reduce == ReduceKind::kMax;
  std::vector<double> acc(static_cast<size_t>(n_out),
                          is_max ? -std::numeric_limits<double>::infinity() : 0.0);
  const float* src = x.f32();
  ForEachOffset(in, strides, 0, [&](int64_t i, int64_t o) {
    double& a = acc[static_cast<size_t>(o)];
    a = is_max ? (std::isnan(src[i]) || std::isnan(a) ? std::numeric_limits<double>::quiet_NaN()
                                                      : std::max<double>(a, src[i]))
               : a + src[i];
  });
  const double count = n_out ? static_cast<double>(x.num_elements()) / n_out : 1;
  float* dst = out.f32();
  for (int64_t i = 0; i < n_out; ++i) {
    dst[i] = static_cast<float>(op.attrs.reduce == ReduceKind::kMean
                                    ? acc[static_cast<size_t>(i)] / count
                                    : acc[static_cast<size_t>(i)]);
  }
}

void Broadcast(const Op& op, const Tensor& x, Tensor& out) {
  if (!op.attrs.broadcast_dims) {
    Gather(x, out, BroadcastStrides(x.shape(), out.shape()), 0);
    return;
  }
  const auto st = Strides(x.shape());
  std::vector<int64_t> strides(static_cast<size_t>(out.shape().rank()), 0);
  const auto& bd = *op.attrs.broadcast_dims;
  for (size_t i = 0; i < bd.size(); ++i) {
    if (x.shape().dim(static_cast<int>(i)) != 1) strides[static_cast<size_t>(bd[i])] = st[i];
  }
  Gather(x, out, strides, 0);
}

void Transpose(const Op& op, const Tensor& x, Tensor& out) {
  const auto st = Strides(x.shape());
  std::vector<int64_t> strides;
  for (int64_t p : op.attrs.perm) strides.push_back(st[static_cast<size_t>(p)]);
  Gather(x, out, strides, 0);
}

void Slice(const Op& op, const Tensor& x, Tensor& out) {
  const auto st = Strides(x.shape());
  int64_t base = 0;
  for (size_t d = 0; d < st.size(); ++d) base += op.attrs.start[d] * st[d];
  Gather(x, out, st, base);
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

// splitmix64: a tiny, portable, well-mixed generator, so seeds give the same values everywhere.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double Uniform01(uint64_t& state) {  // in (0, 1)
  return (static_cast<double>(SplitMix64(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace

Status MaterializeInit(const Init& init, Tensor& out) {
  const int64_t n = out.num_elements();
  const bool ints = out.dtype() == DType::kI32;
  switch (init.kind) {
    case Init::Kind::kNone:
      return Status::InvalidArgument("no init spec");
    case Init::Kind::kFill:
      for (int64_t i = 0; i < n; ++i) {
        if (ints) {
          out.i32()[i] = static_cast<int32_t>(std::llround(init.fill));
        } else {
          out.f32()[i] = static_cast<float>(init.fill);
        }
      }
      break;
    case Init::Kind::kValues:
      for (int64_t i = 0; i < n; ++i) {
        const double v = init.values[static_cast<size_t>(i)];
        if (ints) {
          out.i32()[i] = static_cast<int32_t>(std::llround(v));
        } else {
          out.f32()[i] = static_cast<float>(v);
        }
      }
      break;
    case Init::Kind::kRandom: {
      uint64_t state = init.seed;
      float* o = out.f32();
      if (init.distribution == Init::Distribution::kUniform) {
        for (int64_t i = 0; i < n; ++i) {
          o[i] = static_cast<float>((2.0 * Uniform01(state) - 1.0) * init.scale);
        }
      } else {
        for (int64_t i = 0; i < n; i += 2) {  // Box-Muller: two normals per pair of uniforms
          const double r = std::sqrt(-2.0 * std::log(Uniform01(state)));
          const double t = 2.0 * std::numbers::pi * Uniform01(state);
          o[i] = static_cast<float>(r * std::cos(t) * init.scale);
          if (i + 1 < n) o[i + 1] = static_cast<float>(r * std::sin(t) * init.scale);
        }
      }
      break;
    }
  }
  out.RoundToDType();
  return Status::Ok();
}

Status RunKernel(const Op& op, const std::vector<const Tensor*>& in, Tensor& out,
                 const KernelContext& ctx) {
  switch (op.kind) {
    case OpKind::kDot:
      DotKernel(op, *in[0], *in[1], out, ctx);
      return Status::Ok();
    case OpKind::kConv2D:
      Conv2DKernel(op, *in[0], *in[1], out, ctx);
      return Status::Ok();
    case OpKind::kConv2DBackpropInput:
      Conv2DBackpropInputKernel(op, *in[0], *in[1], out, ctx);
      return Status::Ok();
    case OpKind::kConv2DBackpropFilter:
      Conv2DBackpropFilterKernel(op, *in[0], *in[1], out, ctx);
      return Status::Ok();
    case OpKind::kReluGrad:
    case OpKind::kGeluGrad: {
      const float* x = in[0]->f32();
      const float* dy = in[1]->f32();
      float* o = out.f32();
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        o[i] =
            op.kind == OpKind::kReluGrad ? (x[i] > 0 ? dy[i] : 0.0f) : dy[i] * GeluDerivative(x[i]);
      }
      break;
    }
    case OpKind::kSoftmax:
      Softmax(op, *in[0], out);
      break;
    case OpKind::kReduce:
      Reduce(op, *in[0], out);
      break;
    case OpKind::kBroadcast:
      Broadcast(op, *in[0], out);
      break;
    case OpKind::kTranspose:
      Transpose(op, *in[0], out);
      break;
    case OpKind::kSlice:
      Slice(op, *in[0], out);
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
        Binary(op, *in[0], *in[1], out);
      } else if (IsElementwiseUnary(op.kind)) {
        const float* x = in[0]->f32();
        float* o = out.f32();
        for (int64_t i = 0; i < out.num_elements(); ++i) o[i] = ApplyUnary(op.kind, x[i]);
      } else {
        return Status::Internal("no kernel for op kind " + std::string(OpKindName(op.kind)));
      }
  }
  out.RoundToDType();
  return Status::Ok();
}

}  // namespace tpuemu::engine
