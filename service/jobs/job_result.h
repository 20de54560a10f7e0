// The result of a job that ran every step: the JSON stored with it (result_json) — "profile"
// (served by .../metrics, hidden from the job's JSON), "outputs" (a summary of each output tensor
// of the last step), "finalLoss" for a workload with a loss, and "metrics" (steps, compile cache
// hit and time, cycles per step, emulated seconds, flops and TFLOPS, MXU utilization, HBM peak and
// capacity, all-reduce cycles, host seconds, accelerator type). Stateless: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "db/job_repository.h"
#include "engine/runtime/tensor.h"
#include "service/jobs/job_compile.h"

namespace tpuemu::service {

// The sums over a run's steps.
struct RunTotals {
  int64_t cycles = 0;
  double emulated_seconds = 0;
  double flops = 0;
  double host_seconds = 0;
  std::optional<double> final_loss;  // the last step's loss, if the workload has one
  void Add(const db::JobStepRow& step);
};

// {"dtype", "shape", "checksum" (the sum of the elements), "sample" (the first four)}
nlohmann::json SummarizeTensor(const engine::Tensor& tensor);

struct RunFacts {
  int64_t steps = 0;
  int64_t allreduce_cycles_per_step = 0;
  std::string accelerator_type;  // "v4-8"
};
nlohmann::json AssembleResult(const CompiledJob& compiled, const RunFacts& facts,
                              const RunTotals& totals,
                              const std::map<std::string, engine::Tensor>& outputs);

}  // namespace tpuemu::service
