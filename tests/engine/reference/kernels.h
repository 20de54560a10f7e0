// Op kernels: the real values of each IR op on host tensors, with TPU numerics.
//
// MXU ops (dot, conv2d, conv2d_backprop_*; matmul_kernels.cpp, conv.cpp) go through
// engine/kernels/gemm.h's RunGemm at the program's precision: operands rounded/split to bf16 there,
// f32 accumulation. Vector ops (kernels.cpp) compute in f32 (reductions accumulate in double,
// closer to the TPU's tree reduction than a serial f32 sum). A result whose dtype is bf16 is
// rounded to bf16 at the end. Every kernel assumes Graph::Add validated shapes; `out` arrives
// allocated with the op's dtype and shape. Errors: INVALID_ARGUMENT only for data-dependent
// problems, e.g. a label out of range; CANCELLED / DEADLINE_EXCEEDED ("execution cancelled in op
// 'x'") when ctx.parallel.cancel stops a long kernel, which checks it between GEMM tiles, image
// chunks and elementwise chunks
// (`out` then holds partial values). Kernels are stateless; big ones are split over
// ctx.parallel's pool, up to its thread cap.
#pragma once

#include <vector>

#include "base/status.h"
#include "engine/frontend/init_values.h"
#include "engine/frontend/ir.h"
#include "engine/hardware/numerics.h"
#include "engine/runtime/parallel.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::engine::reference {

struct KernelContext {
  Precision precision = Precision::kDefault;
  ParallelContext parallel;
};

// The status of a kernel that ctx.parallel.cancel stopped inside `op`.
Status StoppedIn(const Op& op, const KernelContext& ctx);

// Dispatches on op.kind (not for parameter/constant/reshape, which the executor handles).
Status RunKernel(const Op& op, const std::vector<const Tensor*>& inputs, Tensor& out,
                 const KernelContext& ctx);

// Per-kind entry points, also used by tests.
Status DotKernel(const Op& op, const Tensor& lhs, const Tensor& rhs, Tensor& out,
                 const KernelContext& ctx);
Status Conv2DKernel(const Op& op, const Tensor& x, const Tensor& filter, Tensor& out,
                    const KernelContext& ctx);
Status Conv2DBackpropInputKernel(const Op& op, const Tensor& filter, const Tensor& dy, Tensor& out,
                                 const KernelContext& ctx);
Status Conv2DBackpropFilterKernel(const Op& op, const Tensor& x, const Tensor& dy, Tensor& out,
                                  const KernelContext& ctx);

// Vector-unit kernels with arithmetic (elementwise.cpp).
Status BinaryKernel(const Op& op, const Tensor& a, const Tensor& b, Tensor& out,
                    const KernelContext& ctx);
Status UnaryKernel(const Op& op, const Tensor& x, Tensor& out, const KernelContext& ctx);
// relu_grad / gelu_grad: out = dy · f'(x).
Status ActivationGradKernel(const Op& op, const Tensor& x, const Tensor& dy, Tensor& out,
                            const KernelContext& ctx);
Status SoftmaxKernel(const Op& op, const Tensor& x, Tensor& out, const KernelContext& ctx);
Status ReduceKernel(const Op& op, const Tensor& x, Tensor& out, const KernelContext& ctx);

}  // namespace tpuemu::engine::reference
