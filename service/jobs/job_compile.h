// The compile step of a job's run: the workload's graph through the compile cache, and what the
// run records about the program — the per-op profile (stored with the job and served by
// .../metrics as "ops"), the compile log line and the job_programs row the metrics report and
// the utilization sampler read while the job runs (db/job_program_repository.h).
// Stateless function (the cache is thread-safe); the returned value owns what it holds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/job_program_repository.h"
#include "engine/frontend/compile_cache.h"
#include "engine/hardware/hardware.h"
#include "service/jobs/job_spec.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {

struct CompiledJob {
  engine::CompileCache::Lookup lookup;  // lookup.program is set
  // TensorCores a step occupies: one per shard of a data-parallel workload, else spec.cores.
  int tensorcores = 1;
  // {"ops": OpsProfile(program), "hbmPeakBytesPerTensorCore": n}
  nlohmann::json profile;
  std::string log_line;  // CompileLine
  // compile_end_unix_ns: the wall clock once the run has its program (its steps follow it), also
  // when the compile was made at submit.
  db::JobProgramRow record;

  const engine::CompiledProgram& program() const { return *lookup.program; }
};

// A compile (a cache miss) that a job's submit made to plan its host memory (JobManager's
// admission). The job's run then finds that program in the cache, yet the compile was made for
// this job: the run reports it as its own, as torch_xla's report counts a compile for the step
// that paid for it (UncachedCompile and a CompileTime sample), and a later job served by the
// cache reports CachedCompile.
struct SubmitCompile {
  // Tells whether the run's program is this one without keeping it alive (an evicted program
  // makes the run's lookup a miss of its own).
  std::weak_ptr<const engine::CompiledProgram> program;
  double compile_seconds = 0;
};

// Compiles (or finds in `cache`) `workload`'s graph for `slice` with the spec's precision, one
// TensorCore per shard of a data-parallel workload (else spec.cores). When the lookup finds the
// very program `at_submit` compiled, the result reports that compile (lookup.hit false, its
// compile_seconds) in its line, record and result. Errors are the compiler's (e.g.
// RESOURCE_EXHAUSTED "Ran out of memory in memory space hbm …").
Result<CompiledJob> CompileJob(engine::CompileCache& cache, const std::string& job_name,
                               const JobSpec& spec, const Workload& workload,
                               const engine::Slice& slice,
                               const std::optional<SubmitCompile>& at_submit = std::nullopt);

// Every op of one step that does work (parameters and constants are already in HBM), with its
// unit ("mxu"/"vpu") and planned cost: id, op, unit, cycles, emulatedSeconds, flops,
// mxuUtilization, hbmBytes.
nlohmann::json OpsProfile(const engine::CompiledProgram& program);

}  // namespace tpuemu::service
