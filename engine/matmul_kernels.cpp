// dot: batched matmul on Matmul, with no copy of contiguous operands.
#include <algorithm>

#include "engine/gemm.h"
#include "engine/kernels.h"

namespace tpuemu::engine {
namespace {

// Below this many MACs a matmul runs as one call: sharding overhead would dominate.
constexpr int64_t kMinShardMacs = int64_t{1} << 22;
constexpr int64_t kMinShardRows = 16;

// out[c x r] = in[r x c]ᵀ for `batch` stacked matrices.
FloatBuffer TransposeLast2(const float* in, int64_t batch, int64_t r, int64_t c) {
  FloatBuffer out(static_cast<size_t>(batch * r * c));
  constexpr int64_t kBlock = 32;  // cache blocking
  for (int64_t b = 0; b < batch; ++b) {
    const float* src = in + b * r * c;
    float* dst = out.data() + b * r * c;
    for (int64_t i0 = 0; i0 < r; i0 += kBlock) {
      for (int64_t j0 = 0; j0 < c; j0 += kBlock) {
        for (int64_t i = i0; i < std::min(r, i0 + kBlock); ++i) {
          for (int64_t j = j0; j < std::min(c, j0 + kBlock); ++j) dst[j * r + i] = src[i * c + j];
        }
      }
    }
  }
  return out;
}

}  // namespace

void ShardedMatmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                   const KernelContext& ctx) {
  const int64_t max_shards = ctx.pool ? ctx.pool->threads() + 1 : 1;
  const int64_t shards = std::min(max_shards, m / kMinShardRows);
  if (shards <= 1 || m * n * k < kMinShardMacs) {
    Matmul(a, b, c, m, n, k, ctx.precision);
    return;
  }
  const int64_t rows = (m + shards - 1) / shards;
  ctx.pool->ParallelFor(ctx.pool_group, shards, [&](int64_t s) {
    const int64_t r0 = s * rows;
    const int64_t r1 = std::min(m, r0 + rows);
    if (r0 < r1) Matmul(a + r0 * k, b, c + r0 * n, r1 - r0, n, k, ctx.precision);
  });
}

void DotKernel(const Op& op, const Tensor& lhs, const Tensor& rhs, Tensor& out,
               const KernelContext& ctx) {
  const int lr = lhs.shape().rank(), rr = rhs.shape().rank(), orank = out.shape().rank();
  const bool tl = op.attrs.transpose_lhs, tr = op.attrs.transpose_rhs;
  const int64_t m = out.shape().dim(orank - 2);
  const int64_t n = out.shape().dim(orank - 1);
  const int64_t k = lhs.shape().dim(lr - (tl ? 2 : 1));
  int64_t batch = 1;
  for (int i = 0; i < orank - 2; ++i) batch *= out.shape().dim(i);
  const bool lhs_batched = lr > 2, rhs_batched = rr > 2;

  // Operands Matmul can read in place stay where they are; a transposed one is copied once.
  FloatBuffer lhs_t, rhs_t;
  const float* a = lhs.f32();
  const float* b = rhs.f32();
  if (tl) {
    lhs_t = TransposeLast2(a, lhs_batched ? batch : 1, k, m);
    a = lhs_t.data();
  }
  if (tr) {
    rhs_t = TransposeLast2(b, rhs_batched ? batch : 1, n, k);
    b = rhs_t.data();
  }
  float* c = out.f32();
  if (!rhs_batched) {
    // [b, m, k] · [k, n]: the batch folds into M, one GEMM (lhs rows are contiguous).
    if (lhs_batched) {
      ShardedMatmul(a, b, c, batch * m, n, k, ctx);
    } else {
      ShardedMatmul(a, b, c, m, n, k, ctx);
    }
  } else {
    const int64_t a_stride = lhs_batched ? m * k : 0;
    auto one = [&](int64_t i) {
      KernelContext serial = ctx;
      serial.pool = nullptr;  // batch items are the shards
      ShardedMatmul(a + i * a_stride, b + i * k * n, c + i * m * n, m, n, k, serial);
    };
    if (ctx.pool && batch > 1 && batch * m * n * k >= kMinShardMacs) {
      ctx.pool->ParallelFor(ctx.pool_group, batch, one);
    } else {
      for (int64_t i = 0; i < batch; ++i)
        ShardedMatmul(a + i * a_stride, b + i * k * n, c + i * m * n, m, n, k, ctx);
    }
  }
  out.RoundToDType();
}

}  // namespace tpuemu::engine
