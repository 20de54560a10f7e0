// dot: batched matmul on RunGemm. Operands are read in place: a transposed operand is a strided
// view for the GEMM, never a copy.
#include "engine/kernels/gemm.h"
#include "tests/engine/reference/kernels.h"

namespace tpuemu::engine::reference {

Status DotKernel(const Op& op, const Tensor& lhs, const Tensor& rhs, Tensor& out,
                 const KernelContext& ctx) {
  const int lr = lhs.shape().rank(), rr = rhs.shape().rank(), orank = out.shape().rank();
  const bool tl = op.attrs.transpose_lhs, tr = op.attrs.transpose_rhs;
  const int64_t m = out.shape().dim(orank - 2);
  const int64_t n = out.shape().dim(orank - 1);
  const int64_t k = lhs.shape().dim(lr - (tl ? 2 : 1));
  int64_t batch = 1;
  for (int i = 0; i < orank - 2; ++i) batch *= out.shape().dim(i);
  const bool lhs_batched = lr > 2, rhs_batched = rr > 2;

  GemmProblem p;
  p.batch = batch, p.m = m, p.n = n, p.k = k;
  p.a = {lhs.f32(), tl, !lhs_batched, lhs.dtype() == DType::kBF16};
  p.b = {rhs.f32(), tr, !rhs_batched, rhs.dtype() == DType::kBF16};
  p.c = out.f32();
  if (lhs_batched && !tl && !rhs_batched) {
    // [b, m, k] · [k, n]: the batch folds into M, one GEMM (lhs rows are contiguous).
    p.batch = 1, p.m = batch * m;
    p.a.shared = false;
  }
  if (!RunGemm(p, ctx.precision, ctx.parallel)) return StoppedIn(op, ctx);
  out.RoundToDType();
  return Status::Ok();
}

}  // namespace tpuemu::engine::reference
