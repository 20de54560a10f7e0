// Vector-unit kernels that do arithmetic: elementwise unary/binary ops, activation gradients,
// softmax and reductions. Each runs as contiguous inner loops (vectorised per ISA,
// base/vector_clones.h) over chunks of ~kElementwiseGrain elements handed out by
// ParallelChunks: the chunks use the op's share of the pool and are its cancellation points.
// `out` may be the buffer of an input of the same shape (the executor reuses a dying input's
// buffer): every loop reads element i before writing element i and nothing after it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/vector_clones.h"
#include "engine/kernels/vector_math.h"
#include "tests/engine/reference/kernels.h"
#include "tests/engine/reference/strided.h"

namespace tpuemu::engine::reference {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// o[i] = f(a[i or 0], b[i or 0]) for i < n; a_scalar / b_scalar broadcast one value.
template <typename F>
[[gnu::always_inline]] inline void Row(F f, const float* a, bool a_scalar, const float* b,
                                       bool b_scalar, float* o, int64_t n) {
  if (!a_scalar && !b_scalar) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  } else if (!a_scalar) {
    const float bv = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
  } else if (!b_scalar) {
    const float av = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
  } else {
    const float v = f(*a, *b);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  }
}

TPUEMU_VECTOR_CLONES void BinaryRow(OpKind kind, const float* a, bool a_scalar, const float* b,
                                    bool b_scalar, float* o, int64_t n) {
  switch (kind) {
    case OpKind::kAdd:
      Row([](float x, float y) { return x + y; }, a, a_scalar, b, b_scalar, o, n);
      return;
    case OpKind::kSub:
      Row([](float x, float y) { return x - y; }, a, a_scalar, b, b_scalar, o, n);
      return;
    case OpKind::kMul:
      Row([](float x, float y) { return x * y; }, a, a_scalar, b, b_scalar, o, n);
      return;
    case OpKind::kDiv:
      Row([](float x, float y) { return x / y; }, a, a_scalar, b, b_scalar, o, n);
      return;
    case OpKind::kMax:  // NaN in either operand gives NaN (XLA's maximum)
      Row([](float x, float y) { return x != x || y != y ? kNaN : (x < y ? y : x); }, a, a_scalar,
          b, b_scalar, o, n);
      return;
    default:  // kMin
      Row([](float x, float y) { return x != x || y != y ? kNaN : (y < x ? y : x); }, a, a_scalar,
          b, b_scalar, o, n);
      return;
  }
}

TPUEMU_VECTOR_CLONES void SimpleUnaryRow(OpKind kind, const float* x, float* o, int64_t n) {
  switch (kind) {
    case OpKind::kNeg:
      for (int64_t i = 0; i < n; ++i) o[i] = -x[i];
      return;
    case OpKind::kRelu:
      for (int64_t i = 0; i < n; ++i) o[i] = x[i] > 0 ? x[i] : 0.0f;
      return;
    case OpKind::kLog:
      for (int64_t i = 0; i < n; ++i) o[i] = std::log(x[i]);
      return;
    default:  // kRsqrt
      for (int64_t i = 0; i < n; ++i) o[i] = 1.0f / std::sqrt(x[i]);
      return;
  }
}

TPUEMU_VECTOR_CLONES void ReluGradRow(const float* x, const float* dy, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = x[i] > 0 ? dy[i] : 0.0f;
}

TPUEMU_VECTOR_CLONES void ScaleRow(float* o, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] *= s;
}

// max over n values, NaNs ignored (as std::max(acc, x) does when x is NaN); -inf when empty.
TPUEMU_VECTOR_CLONES float RowMax(const float* x, int64_t n) {
  float lanes[8];
  for (float& l : lanes) l = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] = lanes[l] < x[i + l] ? x[i + l] : lanes[l];
  }
  float m = -std::numeric_limits<float>::infinity();
  for (; i < n; ++i) m = m < x[i] ? x[i] : m;
  for (float l : lanes) m = m < l ? l : m;
  return m;
}

// Σ x in double, eight partial sums.
TPUEMU_VECTOR_CLONES double RowSum(const float* x, int64_t n) {
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] += x[i + l];
  }
  double s = 0;
  for (; i < n; ++i) s += x[i];
  for (double l : lanes) s += l;
  return s;
}

TPUEMU_VECTOR_CLONES void AddRowInto(double* acc, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += x[i];
}

// Flat loops over n elements in chunks; false when cancelled.
template <typename Fn>
bool Flat(const KernelContext& ctx, int64_t n, Fn&& fn) {
  return ParallelChunks(ctx.parallel, n, kElementwiseGrain, fn);
}

// Rows of out's shape in chunks of about kElementwiseGrain elements.
template <typename Fn>
bool Rows(const KernelContext& ctx, const Shape& shape, Fn&& fn) {
  const int64_t len = std::max<int64_t>(RowLength(shape), 1);
  return ParallelChunks(ctx.parallel, RowCount(shape),
                        std::max<int64_t>(1, kElementwiseGrain / len), fn);
}

}  // namespace

Status BinaryKernel(const Op& op, const Tensor& a, const Tensor& b, Tensor& out,
                    const KernelContext& ctx) {
  float* o = out.f32();
  const float* pa = a.f32();
  const float* pb = b.f32();
  const Shape& shape = out.shape();
  const bool a_full = a.shape() == shape, b_full = b.shape() == shape;
  bool done;
  if ((a_full || a.num_elements() == 1) && (b_full || b.num_elements() == 1)) {
    done = Flat(ctx, out.num_elements(), [&](int64_t s, int64_t e) {
      BinaryRow(op.kind, a_full ? pa + s : pa, !a_full, b_full ? pb + s : pb, !b_full, o + s,
                e - s);
    });
  } else {
    // General broadcasting, row by row: each operand either runs along the last dim or repeats
    // one value of it.
    const int rank = shape.rank();
    auto sa = BroadcastStrides(a.shape(), shape), sb = BroadcastStrides(b.shape(), shape);
    const bool a_scalar = sa.back() == 0, b_scalar = sb.back() == 0;
    const int64_t len = shape.dim(rank - 1);
    done = Rows(ctx, shape, [&](int64_t r0, int64_t r1) {
      RowWalker walk(shape, {sa, sb}, {0, 0}, r0);
      for (int64_t r = r0; r < r1; ++r, walk.Next()) {
        BinaryRow(op.kind, pa + walk.offset(0), a_scalar, pb + walk.offset(1), b_scalar,
                  o + r * len, len);
      }
    });
  }
  return done ? Status::Ok() : StoppedIn(op, ctx);
}

Status UnaryKernel(const Op& op, const Tensor& x, Tensor& out, const KernelContext& ctx) {
  const float* px = x.f32();
  float* o = out.f32();
  const bool done = Flat(ctx, out.num_elements(), [&](int64_t s, int64_t e) {
    switch (op.kind) {
      case OpKind::kGelu:
        GeluArray(px + s, o + s, e - s);
        break;
      case OpKind::kTanh:
        TanhArray(px + s, o + s, e - s);
        break;
      case OpKind::kExp:
        ExpArray(px + s, o + s, e - s);
        break;
      default:
        SimpleUnaryRow(op.kind, px + s, o + s, e - s);
    }
  });
  return done ? Status::Ok() : StoppedIn(op, ctx);
}

Status ActivationGradKernel(const Op& op, const Tensor& x, const Tensor& dy, Tensor& out,
                            const KernelContext& ctx) {
  const float* px = x.f32();
  const float* pd = dy.f32();
  float* o = out.f32();
  const bool done = Flat(ctx, out.num_elements(), [&](int64_t s, int64_t e) {
    if (op.kind == OpKind::kReluGrad) {
      ReluGradRow(px + s, pd + s, o + s, e - s);
    } else {
      GeluGradArray(px + s, pd + s, o + s, e - s);
    }
  });
  return done ? Status::Ok() : StoppedIn(op, ctx);
}

Status SoftmaxKernel(const Op& op, const Tensor& x, Tensor& out, const KernelContext& ctx) {
  const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + x.shape().rank() : op.attrs.axis;
  int64_t outer, len, inner;
  AroundAxis(x.shape(), axis, &outer, &len, &inner);
  const float* in = x.f32();
  float* o = out.f32();
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(len * inner, 1));
  const bool done = ParallelChunks(ctx.parallel, outer, grain, [&](int64_t a0, int64_t a1) {
    for (int64_t a = a0; a < a1; ++a) {
      if (inner == 1) {  // the usual last-axis softmax: contiguous rows
        const float* row = in + a * len;
        float* orow = o + a * len;
        const float mx = RowMax(row, len);
        const double sum = ExpShiftSumArray(row, mx, orow, len);
        ScaleRow(orow, static_cast<float>(1.0 / sum), len);
        continue;
      }
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
  });
  return done ? Status::Ok() : StoppedIn(op, ctx);
}

Status ReduceKernel(const Op& op, const Tensor& x, Tensor& out, const KernelContext& ctx) {
  const Shape& in = x.shape();
  std::vector<bool> reduced(static_cast<size_t>(in.rank()), op.attrs.axes.empty());
  for (int64_t a : op.attrs.axes) reduced[static_cast<size_t>(a < 0 ? a + in.rank() : a)] = true;
  const int64_t n_out = out.num_elements();
  const double count = n_out ? static_cast<double>(x.num_elements()) / n_out : 1;
  const bool is_max = op.attrs.reduce == ReduceKind::kMax;
  const bool mean = op.attrs.reduce == ReduceKind::kMean;
  const float* src = x.f32();
  float* dst = out.f32();
  // The reduced dims as one block: x = [outer, len, inner] with the block in the middle.
  int first = in.rank(), last = -1;
  for (int i = 0; i < in.rank(); ++i) {
    if (reduced[static_cast<size_t>(i)]) first = std::min(first, i), last = std::max(last, i);
  }
  bool contiguous = last >= 0;
  for (int i = first; i <= last && contiguous; ++i) contiguous = reduced[static_cast<size_t>(i)];
  if (contiguous && !is_max && x.num_elements() > 0) {
    int64_t outer = 1, len = 1, inner = 1;
    for (int i = 0; i < in.rank(); ++i) {
      (i < first ? outer : i <= last ? len : inner) *= in.dim(i);
    }
    const double scale = mean ? 1.0 / count : 1.0;
    bool done;
    if (inner == 1) {  // suffix: one contiguous row per output
      done = ParallelChunks(ctx.parallel, outer, std::max<int64_t>(1, kElementwiseGrain / len),
                            [&](int64_t r0, int64_t r1) {
                              for (int64_t r = r0; r < r1; ++r) {
                                dst[r] = static_cast<float>(RowSum(src + r * len, len) * scale);
                              }
                            });
    } else {  // rows of `inner` accumulated over `len`, per outer block and column chunk
      const int64_t col_grain = std::min<int64_t>(inner, 4096);
      const int64_t col_chunks = (inner + col_grain - 1) / col_grain;
      done = ParallelChunks(ctx.parallel, outer * col_chunks, 1, [&](int64_t t0, int64_t t1) {
        std::vector<double> acc(static_cast<size_t>(col_grain));
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t o = t / col_chunks, c0 = t % col_chunks * col_grain;
          const int64_t cols = std::min(col_grain, inner - c0);
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t j = 0; j < len; ++j) {
            AddRowInto(acc.data(), src + (o * len + j) * inner + c0, cols);
          }
          for (int64_t c = 0; c < cols; ++c) {
            dst[o * inner + c0 + c] = static_cast<float>(acc[static_cast<size_t>(c)] * scale);
          }
        }
      });
    }
    return done ? Status::Ok() : StoppedIn(op, ctx);
  }
  // General case (max, or scattered axes): one pass with a double accumulator per output.
  std::vector<int64_t> kept_dims;
  for (int i = 0; i < in.rank(); ++i) {
    if (!reduced[static_cast<size_t>(i)]) kept_dims.push_back(in.dim(i));
  }
  const auto kept_strides = Strides(Shape(kept_dims));
  std::vector<int64_t> strides(static_cast<size_t>(in.rank()), 0);
  for (int i = 0, k = 0; i < in.rank(); ++i) {
    if (!reduced[static_cast<size_t>(i)]) strides[static_cast<size_t>(i)] = kept_strides[k++];
  }
  std::vector<double> acc(static_cast<size_t>(n_out),
                          is_max ? -std::numeric_limits<double>::infinity() : 0.0);
  const int64_t len = RowLength(in);
  KernelContext serial = ctx;  // rows share accumulators: one thread, chunks only for cancel
  serial.parallel.pool = nullptr;
  const bool done = Rows(serial, in, [&](int64_t r0, int64_t r1) {
    RowWalker walk(in, {strides}, {0}, r0);
    const int64_t last_stride = in.rank() > 0 ? strides.back() : 0;
    for (int64_t r = r0; r < r1; ++r, walk.Next()) {
      for (int64_t j = 0; j < len; ++j) {
        const float v = src[r * len + j];
        double& a = acc[static_cast<size_t>(walk.offset(0) + j * last_stride)];
        a = is_max ? (std::isnan(v) || std::isnan(a) ? std::numeric_limits<double>::quiet_NaN()
                                                     : std::max<double>(a, v))
                   : a + v;
      }
    }
  });
  if (!done) return StoppedIn(op, ctx);
  for (int64_t i = 0; i < n_out; ++i) {
    dst[i] = static_cast<float>(mean ? acc[static_cast<size_t>(i)] / count
                                     : acc[static_cast<size_t>(i)]);
  }
  return Status::Ok();
}

}  // namespace tpuemu::engine::reference
