// Op kernels: the real values of each IR op on host tensors, with TPU numerics.
//
// MXU ops (dot, conv2d, conv2d_backprop_*; matmul_kernels.cpp, conv.cpp) go through engine/gemm.h's
// Matmul at the program's precision: operands rounded/split to bf16 there, f32 accumulation.
// Vector ops (kernels.cpp) compute in f32 (reductions accumulate in double, closer to the TPU's
// tree reduction than a serial f32 sum). A result whose dtype is bf16 is rounded to bf16 at the
// end. Every kernel assumes Graph::Add validated shapes; `out` arrives allocated with the op's
// dtype and shape. Errors (INVALID_ARGUMENT) only for data-dependent problems, e.g. a label out of
// range. Kernels are stateless; with ctx.pool set, big matmuls are split into shards on that pool.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "engine/ir.h"
#include "engine/numerics.h"
#include "engine/pool.h"
#include "engine/tensor.h"

namespace tpuemu::engine {

struct KernelContext {
  Precision precision = Precision::kDefault;
  Pool* pool = nullptr;  // optional; not owned
  std::string pool_group = "engine";
};

// Dispatches on op.kind (not for parameter/constant/reshape, which the executor handles).
Status RunKernel(const Op& op, const std::vector<const Tensor*>& inputs, Tensor& out,
                 const KernelContext& ctx);

// Per-kind entry points, also used by tests.
void DotKernel(const Op& op, const Tensor& lhs, const Tensor& rhs, Tensor& out,
               const KernelContext& ctx);
void Conv2DKernel(const Op& op, const Tensor& x, const Tensor& filter, Tensor& out,
                  const KernelContext& ctx);
void Conv2DBackpropInputKernel(const Op& op, const Tensor& filter, const Tensor& dy, Tensor& out,
                               const KernelContext& ctx);
void Conv2DBackpropFilterKernel(const Op& op, const Tensor& x, const Tensor& dy, Tensor& out,
                                const KernelContext& ctx);

// c[m x n] = a[m x k] · b[k x n] at ctx.precision, split over row blocks on ctx.pool when large.
void ShardedMatmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                   const KernelContext& ctx);

// Values of a constant or an unfed parameter from its Init (deterministic per seed).
// INVALID_ARGUMENT if init.kind is kNone.
Status MaterializeInit(const Init& init, Tensor& out);

}  // namespace tpuemu::engine
