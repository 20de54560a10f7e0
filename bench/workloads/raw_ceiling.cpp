#include "bench/workloads/raw_ceiling.h"

#include <set>

namespace tpuemu::bench {

RawCeiling::RawCeiling(const engine::CompiledProgram& program) {
  for (const engine::OpPlan& plan : program.plans) {
    if (plan.kind != engine::OpKind::kDot || plan.gemm.m * plan.gemm.k * plan.gemm.n == 0) {
      continue;
    }
    count_[{plan.gemm.m, plan.gemm.k, plan.gemm.n}] += plan.batch;
  }
}

double RawCeiling::Seconds(int threads, int reps, std::string* kernel) {
  double seconds = 0;
  std::set<std::string> kernels;
  for (const auto& [key, count] : count_) {
    std::unique_ptr<RawGemm>& gemm = gemms_[key];
    if (!gemm) gemm = std::make_unique<RawGemm>(key.m, key.k, key.n);
    const auto [name, timing] = gemm->Best(threads, reps);
    seconds += timing.wall_s * static_cast<double>(count);
    kernels.insert(name);
  }
  if (kernel != nullptr) {
    kernel->clear();
    for (const std::string& k : kernels) *kernel += (kernel->empty() ? "" : "+") + k;
  }
  return seconds;
}

}  // namespace tpuemu::bench
