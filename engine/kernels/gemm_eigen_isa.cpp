// Eigen's f32 GEMM for one pass (engine/kernels/gemm_pass.h), compiled once per ISA
// (engine/kernels/isa.h).
#include "engine/kernels/isa_variant.h"  // first: renames Eigen for this variant

#include <Eigen/Core>

#include "engine/kernels/isa_kernels.h"

namespace tpuemu::engine::TPUEMU_ISA_NAMESPACE {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename M>
using View = Eigen::Map<const M, Eigen::Unaligned, Eigen::OuterStride<>>;

// A row-major [rows x cols] view with leading dimension ld is, transposed, a column-major one.
template <typename M>
View<M> ViewOf(const PassMatrix& x, int64_t item, int64_t rows, int64_t cols) {
  return View<M>(static_cast<const float*>(x.data) + item * x.batch_stride, rows, cols,
                 Eigen::OuterStride<>(x.ld));
}

template <typename MA, typename MB>
void Run(const PassArgs& p) {
  for (int64_t t = 0; t < p.batch; ++t) {
    const View<MA> a = ViewOf<MA>(p.a, t, p.m, p.k);
    const View<MB> b = ViewOf<MB>(p.b, t, p.k, p.n);
    Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>> c(
        p.c + t * p.c_batch_stride, p.m, p.n, Eigen::OuterStride<>(p.ldc));
    // c += a·b adds the product block by block: a re-association of the f32 sum, nothing more.
    if (p.accumulate) {
      c.noalias() += a * b;
    } else {
      c.noalias() = a * b;
    }
  }
}

}  // namespace

void GemmPass(const PassArgs& p) {
  if (p.a.transposed) {
    p.b.transposed ? Run<ColMajor, ColMajor>(p) : Run<ColMajor, RowMajor>(p);
  } else {
    p.b.transposed ? Run<RowMajor, ColMajor>(p) : Run<RowMajor, RowMajor>(p);
  }
}

}  // namespace tpuemu::engine::TPUEMU_ISA_NAMESPACE
