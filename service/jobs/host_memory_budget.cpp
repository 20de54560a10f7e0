#include "service/jobs/host_memory_budget.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace tpuemu::service {
namespace {

// A job's own tensors (its generated weights and data, its outputs) hold 4 bytes an element: f32
// for every floating dtype, int32 labels (engine/runtime/tensor.h).
int64_t TensorBytes(const engine::Shape& shape) { return 4 * shape.NumElements(); }

}  // namespace

int64_t JobHostBytes(const engine::CompiledProgram& program, const engine::Graph& graph,
                     int shards) {
  int64_t parameters = 0, outputs = 0;
  for (const engine::Op& op : graph.ops()) {
    if (op.kind == engine::OpKind::kParameter) parameters += TensorBytes(op.shape);
  }
  for (const std::string& id : graph.outputs()) {
    outputs += TensorBytes(graph.ops()[static_cast<size_t>(graph.IndexOf(id))].shape);
  }
  const int64_t n = std::max(shards, 1);
  // Values of every shard + the peak of each Execute (the shards run side by side: StepRunner)
  // + every shard's outputs and the last step's.
  return n * parameters + n * program.peak_host_bytes + n * outputs;
}

int64_t DefaultHostMemoryBudgetBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream in(line);
    std::string key;
    int64_t kib = 0;
    if (in >> key >> kib && key == "MemTotal:" && kib > 0) return kib * 1024 / 2;
  }
  return int64_t{4} << 30;
}

int64_t HostMemoryBudget::Clamp(int64_t bytes) const {
  return std::clamp<int64_t>(bytes, 0, budget_);
}

bool HostMemoryBudget::TryReserve(int64_t bytes) {
  if (budget_ <= 0) return true;
  std::lock_guard lock(mu_);
  if (reserved_ + Clamp(bytes) > budget_) return false;
  reserved_ += Clamp(bytes);
  return true;
}

void HostMemoryBudget::Release(int64_t bytes) {
  if (budget_ <= 0) return;
  std::lock_guard lock(mu_);
  reserved_ = std::max<int64_t>(0, reserved_ - Clamp(bytes));
}

int64_t HostMemoryBudget::reserved_bytes() const {
  std::lock_guard lock(mu_);
  return reserved_;
}

}  // namespace tpuemu::service
