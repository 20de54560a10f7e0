// The executor: runs a CompiledProgram on host tensors and reports what the TPU would take.
//
// Execute(program, graph, feeds, options):
//  * graph supplies the constants' values (the compiled program holds none, so a cache hit runs
//    with the caller's constants); it must have the program's structure, else INVALID_ARGUMENT.
//  * feeds: one tensor per parameter id, with the parameter's dtype and shape (INVALID_ARGUMENT
//    naming both otherwise, or naming a feed that is not a parameter). An unfed parameter takes
//    its init spec, else INVALID_ARGUMENT "parameter 'x' was not fed". Feeds are read in place,
//    never copied (except a feed that is itself an output).
//  * returns the outputs by id, per-op stats (emulated cycles/seconds/flops/HBM bytes/MXU
//    utilization from the plan, and the host wall time), and totals.
//  * options.cancel is checked between ops: CANCELLED "execution cancelled before op 'x'".
//  * options.pool (optional, not owned) splits big matmuls/convs into shards under
//    options.pool_group; without it everything runs on the calling thread.
// Intermediates are freed after their last use. Thread-safe: Execute keeps no state; concurrent
// calls may share a CompiledProgram, a Graph and a Pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/compiler.h"
#include "engine/pool.h"
#include "engine/tensor.h"

namespace tpuemu::engine {

struct ExecuteOptions {
  const std::atomic<bool>* cancel = nullptr;  // not owned
  Pool* pool = nullptr;                       // not owned
  std::string pool_group = "engine";          // fairness key on the pool, e.g. the job id
};

struct OpStats {
  std::string id;
  OpKind kind = OpKind::kParameter;
  DType dtype = DType::kF32;
  Shape shape;
  int64_t cycles = 0;
  double seconds = 0;
  double flops = 0;
  double hbm_bytes = 0;
  double mxu_utilization = 0;
  int64_t host_ns = 0;  // wall time the host spent on this op
};

struct ExecutionResult {
  std::map<std::string, Tensor> outputs;
  std::vector<OpStats> ops;  // graph order
  ProgramTotals totals;      // emulated, = the compiled plan's
  int64_t peak_hbm_bytes_per_tensorcore = 0;
  int64_t host_ns = 0;
};

Result<ExecutionResult> Execute(const CompiledProgram& program, const Graph& graph,
                                const std::map<std::string, Tensor>& feeds,
                                const ExecuteOptions& options = {});

}  // namespace tpuemu::engine
