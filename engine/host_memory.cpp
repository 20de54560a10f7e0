#include "engine/host_memory.h"

#include <algorithm>

#include "engine/compiler.h"

namespace tpuemu::engine {
namespace {

constexpr int64_t kHostElementBytes = 4;

// Operand planes per operand a GEMM prepares at `precision` (gemm_operands.h).
int64_t PlanesPerOperand(Precision precision) {
  switch (precision) {
    case Precision::kHigh:
      return 2;
    case Precision::kHighest:
      return 3;
    case Precision::kDefault:
    case Precision::kF32:
      return 1;
  }
  return 3;
}

}  // namespace

int64_t HostTensorBytes(const Shape& shape) { return shape.NumElements() * kHostElementBytes; }

int64_t HostScratchBytes(const Op& op, const Graph& graph, const OpPlan& plan,
                         Precision precision) {
  const int64_t planes = PlanesPerOperand(precision);
  const int64_t m = plan.gemm.m, n = plan.gemm.n, k = plan.gemm.k;
  switch (op.kind) {
    case OpKind::kDot: {
      const Shape& a = graph.ops()[static_cast<size_t>(op.input_index[0])].shape;
      const Shape& b = graph.ops()[static_cast<size_t>(op.input_index[1])].shape;
      return planes * (HostTensorBytes(a) + HostTensorBytes(b));
    }
    case OpKind::kConv2D:
    case OpKind::kConv2DBackpropFilter:  // im2col [rows, K] (read as A or as Aᵀ), then its planes
      return (planes * plan.batch * (m * k + k * n) + plan.batch * m * k) * kHostElementBytes;
    case OpKind::kConv2DBackpropInput:  // dcol [rows, K] = dy · filterᵀ
      return (planes * plan.batch * (m * k + k * n) + plan.batch * m * n) * kHostElementBytes;
    case OpKind::kReduce:  // the general path's f64 accumulator per output (elementwise.cpp)
      return op.shape.NumElements() * 8;
    default:
      return 0;
  }
}

int64_t PeakHostBytes(const Graph& graph, const std::vector<OpPlan>& plans, Precision precision) {
  const auto& ops = graph.ops();
  const size_t n = ops.size();
  std::vector<int64_t> release(n + 1, 0);
  int64_t live = 0, peak = 0;
  for (size_t i = 0; i < n; ++i) {
    const OpPlan& plan = plans[i];
    const int64_t bytes = HostTensorBytes(ops[i].shape);
    live += bytes;
    release[static_cast<size_t>(std::min<int64_t>(plan.last_use, static_cast<int64_t>(n)))] +=
        bytes;
    peak = std::max(peak, live + HostScratchBytes(ops[i], graph, plan, precision));
    live -= release[i];
  }
  // Execute copies an output that is a parameter (the caller keeps its feed).
  for (const std::string& id : graph.outputs()) {
    const Op& op = ops[static_cast<size_t>(graph.IndexOf(id))];
    if (op.kind == OpKind::kParameter) live += HostTensorBytes(op.shape);
  }
  return std::max(peak, live);
}

}  // namespace tpuemu::engine
