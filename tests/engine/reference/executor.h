// The executor: runs a CompiledProgram on host tensors and reports what the TPU would take.
//
// Execute(program, graph, feeds, options):
//  * graph supplies the constants' values (the compiled program holds none, so a cache hit runs
//    with the caller's constants); it must have the program's structure, else INVALID_ARGUMENT.
//  * feeds: one tensor per parameter id (ExecuteBorrowed: by pointer, a FeedView), with the
//    parameter's dtype and shape (INVALID_ARGUMENT naming both otherwise, or naming a feed that
//    is not a parameter). An unfed parameter takes its init spec, else INVALID_ARGUMENT
//    "parameter 'x' was not fed". Feeds are read in place, never copied (except a feed that is
//    itself an output).
//  * returns the outputs by id, per-op stats (emulated cycles/seconds/flops/HBM bytes/MXU
//    utilization from the plan, and the host wall time), and totals.
//  * options.cancel and options.deadline are checked between ops and inside long kernels (between
//    GEMM tiles and passes, conv image chunks, elementwise chunks; each well under 100 ms), so a
//    stop takes effect within a fraction of a second whatever the op size: CANCELLED "execution
//    cancelled before op 'x'" / "... in op 'x'", or DEADLINE_EXCEEDED "execution deadline
//    exceeded ...".
//  * options.pool (optional, not owned) splits big ops into tiles/chunks under options.pool_group,
//    on at most options.max_threads threads (the caller included; 0 = the whole pool + caller):
//    a job asking for N cores passes max_threads = N. Without a pool everything runs on the
//    calling thread.
// Memory: intermediates are freed after their last use; an elementwise op or softmax writes into
// the buffer of an input that dies at it (same dtype and shape); other buffers come from
// BufferCache (recycled across executions), and random-init parameters/constants from InitCache
// (materialised once per process, not per step). Thread-safe: Execute keeps no state; concurrent
// calls may share a CompiledProgram, a Graph and a Pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/frontend/compiler.h"
#include "engine/runtime/execute_options.h"
#include "engine/runtime/parallel.h"
#include "engine/runtime/pool.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::engine::reference {

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

Result<ExecutionResult> ExecuteBorrowed(const CompiledProgram& program, const Graph& graph,
                                        const FeedView& feeds, const ExecuteOptions& options = {});
Result<ExecutionResult> Execute(const CompiledProgram& program, const Graph& graph,
                                const std::map<std::string, Tensor>& feeds,
                                const ExecuteOptions& options = {});

}  // namespace tpuemu::engine::reference
