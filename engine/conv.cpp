// conv2d and its two backprops as im2col GEMMs on Matmul (the MXU lowering SCALE-Sim assumes).
// NHWC activations, HWIO filters: the filter is already the [fh·fw·cin, cout] GEMM operand.
#include <algorithm>
#include <cstring>

#include "engine/gemm.h"
#include "engine/kernels.h"

namespace tpuemu::engine {
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

// Runs fn(image) for every image, on the pool when there is one (images are independent).
void ForEachImage(const KernelContext& ctx, int64_t images,
                  const std::function<void(int64_t)>& fn) {
  if (ctx.pool && images > 1) {
    ctx.pool->ParallelFor(ctx.pool_group, images, fn);
  } else {
    for (int64_t i = 0; i < images; ++i) fn(i);
  }
}

}  // namespace

void Conv2DKernel(const Op& op, const Tensor& x, const Tensor& filter, Tensor& out,
                  const KernelContext& ctx) {
  const Geometry g = MakeGeometry(op.attrs.conv, x.shape(), filter.shape());
  const bool pointwise =
      g.fh == 1 && g.fw == 1 && g.sh == 1 && g.sw == 1 && g.oh == g.h && g.ow == g.w;
  if (pointwise) {  // a 1x1 conv is already a GEMM over NHWC rows: no im2col copy
    ShardedMatmul(x.f32(), filter.f32(), out.f32(), g.n * g.Rows(), g.cout, g.c, ctx);
  } else {
    KernelContext serial = ctx;
    serial.pool = nullptr;
    ForEachImage(ctx, g.n, [&](int64_t i) {
      FloatBuffer col(static_cast<size_t>(g.Rows() * g.K()));
      Im2Col(g, x.f32() + i * g.h * g.w * g.c, col.data());
      ShardedMatmul(col.data(), filter.f32(), out.f32() + i * g.Rows() * g.cout, g.Rows(), g.cout,
                    g.K(), g.n > 1 ? serial : ctx);
    });
  }
  out.RoundToDType();
}

void Conv2DBackpropInputKernel(const Op& op, const Tensor& filter, const Tensor& dy, Tensor& out,
                               const KernelContext& ctx) {
  const Geometry g = MakeGeometry(op.attrs.conv, out.shape(), filter.shape());
  // filterᵀ [cout, K], so that dcol = dy · filterᵀ is a plain row-major GEMM.
  FloatBuffer ft(static_cast<size_t>(g.K() * g.cout));
  for (int64_t r = 0; r < g.K(); ++r) {
    for (int64_t c = 0; c < g.cout; ++c)
      ft[static_cast<size_t>(c * g.K() + r)] = filter.f32()[r * g.cout + c];
  }
  KernelContext serial = ctx;
  serial.pool = nullptr;
  ForEachImage(ctx, g.n, [&](int64_t i) {
    FloatBuffer dcol(static_cast<size_t>(g.Rows() * g.K()));
    ShardedMatmul(dy.f32() + i * g.Rows() * g.cout, ft.data(), dcol.data(), g.Rows(), g.K(), g.cout,
                  g.n > 1 ? serial : ctx);
    Col2ImAdd(g, dcol.data(), out.f32() + i * g.h * g.w * g.c);  // out arrives zeroed
  });
  out.RoundToDType();
}

void Conv2DBackpropFilterKernel(const Op& op, const Tensor& x, const Tensor& dy, Tensor& out,
                                const KernelContext& ctx) {
  const Geometry g = MakeGeometry(op.attrs.conv, x.shape(), out.shape());
  // dfilter [K, cout] = colᵀ [K, n·rows] · dy [n·rows, cout]: ONE GEMM, so the whole batch is
  // accumulated in f32 inside it, as on the MXU.
  const int64_t rows = g.n * g.Rows();
  FloatBuffer col_t(static_cast<size_t>(g.K() * rows));
  {
    FloatBuffer col(static_cast<size_t>(g.Rows() * g.K()));
    for (int64_t i = 0; i < g.n; ++i) {
      Im2Col(g, x.f32() + i * g.h * g.w * g.c, col.data());
      for (int64_t r = 0; r < g.Rows(); ++r) {
        for (int64_t k = 0; k < g.K(); ++k) {
          col_t[static_cast<size_t>(k * rows + i * g.Rows() + r)] =
              col[static_cast<size_t>(r * g.K() + k)];
        }
      }
    }
  }
  ShardedMatmul(col_t.data(), dy.f32(), out.f32(), g.K(), g.cout, rows, ctx);
  out.RoundToDType();
}

}  // namespace tpuemu::engine
