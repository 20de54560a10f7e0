#include "service/jobs/step_runner.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "engine/chip/chip_model.h"
#include "engine/frontend/graph_program.h"

namespace tpuemu::service {

Result<std::unique_ptr<StepRunner>> StepRunner::Create(const engine::CompiledProgram& program,
                                                       Workload& workload,
                                                       const engine::Slice& slice, int tensorcores,
                                                       engine::ExecuteOptions exec) {
  if (program.lowered == nullptr) {
    return Status::Internal("program '" + program.name + "' has no lowered module");
  }
  return std::unique_ptr<StepRunner>(
      new StepRunner(program, workload, slice, tensorcores, std::move(exec)));
}

StepRunner::StepRunner(const engine::CompiledProgram& program, Workload& workload,
                       const engine::Slice& slice, int tensorcores, engine::ExecuteOptions exec)
    : program_(program),
      workload_(workload),
      tensorcores_(tensorcores),
      exec_(std::move(exec)),
      parallel_(engine::ParallelContextOf(exec_)),
      clock_hz_(slice.spec().clock_hz),
      peak_flops_per_tensorcore_cycle_(slice.spec().PeakBf16FlopsPerTensorCore() / clock_hz_),
      allreduce_cycles_(workload.shards() > 1 ? engine::TensorCoreCollectiveCycles(
                                                    slice.type(), engine::Collective::kAllReduce,
                                                    workload.shards(), workload.GradientBytes())
                                              : 0) {}

Result<db::JobStepRow> StepRunner::Run(int64_t step) {
  const auto t0 = std::chrono::steady_clock::now();
  // The data-parallel shards run at once, as replicas do: up to `threads` of them side by side,
  // each on an equal share of the job's threads (one each when shards = threads, the usual case:
  // a job's cores are both its shards and its threads). Small per-shard ops then need no split,
  // and the shards share the read-only weights through their feed views.
  const int shards = workload_.shards();
  const int threads = parallel_.Threads();
  const int side_by_side = std::max(1, std::min(shards, threads));
  engine::ExecuteOptions per_shard = exec_;
  per_shard.max_threads = std::max(1, threads / side_by_side);
  std::vector<Result<std::map<std::string, engine::Tensor>>> runs(
      static_cast<size_t>(shards), Status::Internal("shard did not run"));
  auto run_shard = [&](int64_t shard) {
    runs[static_cast<size_t>(shard)] =
        program_.lowered->Run(workload_.graph(), workload_.FeedView(static_cast<int>(shard)),
                              program_.options.precision, per_shard);
  };
  if (side_by_side > 1) {
    exec_.pool->ParallelFor(exec_.pool_group, shards, run_shard, side_by_side);
  } else {
    for (int shard = 0; shard < shards; ++shard) run_shard(shard);
  }
  std::vector<std::map<std::string, engine::Tensor>> results;
  for (auto& r : runs) {
    if (!r.ok()) return r.status();  // the first shard's error, in shard order
    results.push_back(std::move(r).value());
  }
  // A stop after the last shard's run skips the update (a large model's takes a while).
  if (!workload_.ApplySgd(results, parallel_)) return parallel_.cancel.Check("in the SGD update");
  db::JobStepRow m;
  m.step = step;
  m.cycles = program_.totals.cycles + allreduce_cycles_;
  m.emulated_seconds = static_cast<double>(m.cycles) / clock_hz_;
  m.flops = program_.totals.flops * static_cast<double>(results.size());
  m.mxu_utilization = m.cycles > 0 ? m.flops / (static_cast<double>(m.cycles) * tensorcores_ *
                                                peak_flops_per_tensorcore_cycle_)
                                   : 0;
  if (workload_.loss_id()) {
    double loss = 0;
    for (const auto& outputs : results) loss += outputs.at(*workload_.loss_id()).f32()[0];
    m.loss = loss / static_cast<double>(results.size());
  }
  m.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  last_outputs_ = std::move(results[0]);
  return m;
}

}  // namespace tpuemu::service
