// conv2d and its two backprops as im2col GEMMs on RunGemm (the MXU lowering SCALE-Sim assumes).
// NHWC activations, HWIO filters: the filter is already the [fh·fw·cin, cout] GEMM operand.
#include <algorithm>
#include <cstring>
#include <functional>

#include "engine/kernels/gemm.h"
#include "tests/engine/reference/kernels.h"

namespace tpuemu::engine::reference {
namespace {

struct Geometry {
  int64_t n, h, w, c;      // input
  int64_t fh, fw, cout;    // filter
  int64_t oh, ow;          // output
  int64_t sh, sw, pt, pl;  // strides, leading pads
  int64_t K() const { return fh * fw * c; }
  int64_t Rows() const { return oh * ow; }  // per image
};

Geometry MakeGeometry(const Conv2DParams& p, const Shape& x, const Shape& f) {
  Geometry g{};
  g.n = x.dim(0), g.h = x.dim(1), g.w = x.dim(2), g.c = x.dim(3);
  g.fh = f.dim(0), g.fw = f.dim(1), g.cout = f.dim(3);
  const ConvDim dh = ConvOutputDim(g.h, g.fh, p.stride_h, p.padding, p.pads[0], p.pads[1]);
  const ConvDim dw = ConvOutputDim(g.w, g.fw, p.stride_w, p.padding, p.pads[2], p.pads[3]);
  g.oh = dh.out, g.ow = dw.out;
  g.sh = p.stride_h, g.sw = p.stride_w;
  g.pt = dh.pad_before, g.pl = dw.pad_before;
  return g;
}

// col[oy·ow + ox, (ky·fw + kx)·c + ci] = x[oy·sh − pt + ky, ox·sw − pl + kx, ci] (0 in padding).
void Im2Col(const Geometry& g, const float* x, float* col) {
  // Zero channels: nothing to copy, and the empty tensors' null buffers must not reach memcpy.
  if (g.c == 0) return;
  const int64_t k = g.K();
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      float* row = col + (oy * g.ow + ox) * k;
      for (int64_t ky = 0; ky < g.fh; ++ky) {
        const int64_t iy = oy * g.sh - g.pt + ky;
        for (int64_t kx = 0; kx < g.fw; ++kx) {
          const int64_t ix = ox * g.sw - g.pl + kx;
          float* dst = row + (ky * g.fw + kx) * g.c;
          if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) {
            std::fill(dst, dst + g.c, 0.0f);
          } else {
            std::memcpy(dst, x + (iy * g.w + ix) * g.c, sizeof(float) * static_cast<size_t>(g.c));
          }
        }
      }
    }
  }
}

// The adjoint of Im2Col: dx[...] += col[...].
void Col2ImAdd(const Geometry& g, const float* col, float* dx) {
  if (g.c == 0) return;  // as in Im2Col
  const int64_t k = g.K();
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const float* row = col + (oy * g.ow + ox) * k;
      for (int64_t ky = 0; ky < g.fh; ++ky) {
        const int64_t iy = oy * g.sh - g.pt + ky;
        if (iy < 0 || iy >= g.h) continue;
        for (int64_t kx = 0; kx < g.fw; ++kx) {
          const int64_t ix = ox * g.sw - g.pl + kx;
          if (ix < 0 || ix >= g.w) continue;
          const float* src = row + (ky * g.fw + kx) * g.c;
          float* dst = dx + (iy * g.w + ix) * g.c;
          for (int64_t ci = 0; ci < g.c; ++ci) dst[ci] += src[ci];
        }
      }
    }
  }
}

// im2col buffers of one chunk of images hold at most this many floats (64 MiB): the conv never
// materialises a whole batch's columns, and each chunk is a cancellation point.
constexpr int64_t kMaxColElements = int64_t{1} << 24;

int64_t ImagesPerChunk(const Geometry& g) {
  const int64_t per_image = std::max<int64_t>(1, g.Rows() * g.K());
  return std::clamp<int64_t>(kMaxColElements / per_image, 1, std::max<int64_t>(g.n, 1));
}

// Runs fn(image) for images [first, first + count), in parallel on the context's pool.
bool ForEachImage(const KernelContext& ctx, int64_t first, int64_t count,
                  const std::function<void(int64_t)>& fn) {
  return ParallelChunks(ctx.parallel, count, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(first + i);
  });
}

GemmOperand Operand(const Tensor& t, bool transposed = false) {
  return {t.f32(), transposed, /*shared=*/false, t.dtype() == DType::kBF16};
}

}  // namespace

Status Conv2DKernel(const Op& op, const Tensor& x, const Tensor& filter, Tensor& out,
                    const KernelContext& ctx) {
  const Geometry g = MakeGeometry(op.attrs.conv, x.shape(), filter.shape());
  const bool pointwise =
      g.fh == 1 && g.fw == 1 && g.sh == 1 && g.sw == 1 && g.oh == g.h && g.ow == g.w;
  GemmProblem p;
  p.n = g.cout, p.k = g.K();
  p.b = Operand(filter);
  if (pointwise) {  // a 1x1 conv is already a GEMM over NHWC rows: no im2col copy
    p.m = g.n * g.Rows();
    p.a = Operand(x);
    p.c = out.f32();
    if (!RunGemm(p, ctx.precision, ctx.parallel)) return StoppedIn(op, ctx);
  } else {
    // Per chunk of images: im2col into [images·rows, K], then one GEMM over all of its rows.
    const int64_t chunk = ImagesPerChunk(g);
    FloatBuffer col(static_cast<size_t>(std::min(chunk, g.n) * g.Rows() * g.K()));
    for (int64_t first = 0; first < g.n; first += chunk) {
      const int64_t count = std::min(chunk, g.n - first);
      if (!ForEachImage(ctx, first, count, [&](int64_t i) {
            Im2Col(g, x.f32() + i * g.h * g.w * g.c, col.data() + (i - first) * g.Rows() * g.K());
          })) {
        return StoppedIn(op, ctx);
      }
      p.m = count * g.Rows();
      p.a = {col.data(), false, false, x.dtype() == DType::kBF16};
      p.c = out.f32() + first * g.Rows() * g.cout;
      if (!RunGemm(p, ctx.precision, ctx.parallel)) return StoppedIn(op, ctx);
    }
  }
  out.RoundToDType();
  return Status::Ok();
}

Status Conv2DBackpropInputKernel(const Op& op, const Tensor& filter, const Tensor& dy, Tensor& out,
                                 const KernelContext& ctx) {
  const Geometry g = MakeGeometry(op.attrs.conv, out.shape(), filter.shape());
  // dcol [images·rows, K] = dy [images·rows, cout] · filterᵀ; the HWIO filter [K, cout] read
  // transposed in place.
  GemmProblem p;
  p.n = g.K(), p.k = g.cout;
  p.b = Operand(filter, /*transposed=*/true);
  std::fill_n(out.f32(), out.num_elements(), 0.0f);  // Col2ImAdd accumulates into dx
  const int64_t chunk = ImagesPerChunk(g);
  FloatBuffer dcol(static_cast<size_t>(std::min(chunk, g.n) * g.Rows() * g.K()));
  for (int64_t first = 0; first < g.n; first += chunk) {
    const int64_t count = std::min(chunk, g.n - first);
    p.m = count * g.Rows();
    p.a = {dy.f32() + first * g.Rows() * g.cout, false, false, dy.dtype() == DType::kBF16};
    p.c = dcol.data();
    if (!RunGemm(p, ctx.precision, ctx.parallel)) return StoppedIn(op, ctx);
    // Images own disjoint slices of dx: safe in parallel.
    if (!ForEachImage(ctx, first, count, [&](int64_t i) {
          Col2ImAdd(g, dcol.data() + (i - first) * g.Rows() * g.K(),
                    out.f32() + i * g.h * g.w * g.c);
        })) {
      return StoppedIn(op, ctx);
    }
  }
  out.RoundToDType();
  return Status::Ok();
}

Status Conv2DBackpropFilterKernel(const Op& op, const Tensor& x, const Tensor& dy, Tensor& out,
                                  const KernelContext& ctx) {
  const Geometry g = MakeGeometry(op.attrs.conv, x.shape(), out.shape());
  // dfilter [K, cout] = colᵀ [K, n·rows] · dy [n·rows, cout]: ONE GEMM, so the whole batch is
  // accumulated in f32 inside it, as on the MXU; col [n·rows, K] is read transposed in place.
  const int64_t rows = g.n * g.Rows();
  FloatBuffer col(static_cast<size_t>(rows * g.K()));
  if (!ForEachImage(ctx, 0, g.n, [&](int64_t i) {
        Im2Col(g, x.f32() + i * g.h * g.w * g.c, col.data() + i * g.Rows() * g.K());
      })) {
    return StoppedIn(op, ctx);
  }
  GemmProblem p;
  p.m = g.K(), p.n = g.cout, p.k = rows;
  p.a = {col.data(), /*transposed=*/true, false, x.dtype() == DType::kBF16};
  p.b = Operand(dy);
  p.c = out.f32();
  if (!RunGemm(p, ctx.precision, ctx.parallel)) return StoppedIn(op, ctx);
  out.RoundToDType();
  return Status::Ok();
}

}  // namespace tpuemu::engine::reference
