// Runs an HLO module with XLA's semantics (docs/operation_semantics.md) on host arrays, once per
// emulated device, in lockstep: every instruction is evaluated for all devices before the next,
// so a collective sees every participant's operand and computes the group's result
// deterministically on one thread. Control flow runs the devices that take the same path
// together (a while loop keeps iterating the devices whose condition is still true; a
// conditional runs each branch for the devices that chose it); a collective whose group is not
// fully present (devices diverged) is an error, as it would hang on a real TPU.
//
// Numerics: dot and convolution on the MXU path (engine/kernels/gemm.h) at the instruction's
// operand_precision/algorithm, else options.precision; everything else with the CPU-reference
// semantics of elementwise.h. Elided constants are filled from options.seed (docs/hlo.md).
//
// Errors (before anything runs): UNIMPLEMENTED naming every unsupported instruction's name,
// opcode (custom_call_target for custom-call) and line; UNIMPLEMENTED for element types other
// than pred, s8-s64, u8-u64, f16, bf16, f32 (f64 and complex included). While running:
// INVALID_ARGUMENT when a while loop exceeds limits.max_while_trips or an array exceeds
// limits.max_tensor_elements, CANCELLED when *options.cancel becomes true, DEADLINE_EXCEEDED once
// options.deadline has passed.
// Evaluate is a pure function of its arguments: thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/hardware/numerics.h"
#include "engine/hlo/array.h"
#include "engine/hlo/limits.h"
#include "engine/hlo/module.h"
#include "engine/runtime/parallel.h"

namespace tpuemu::engine::hlo {

struct EvalOptions {
  Precision precision = Precision::kDefault;  // dots/convolutions that name no precision
  uint64_t seed = 0;                          // elided constants, rng and rng-get-and-update-state
  Limits limits;
  const std::atomic<bool>* cancel = nullptr;  // not owned
  // Past it the run stops as at a cancel, with DEADLINE_EXCEEDED (a job's timeout).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Where a dot's or convolution's GEMM tiles run (not owned; null: the calling thread), under
  // which fairness group, on at most max_threads threads (the caller included; 0 = the pool's
  // threads + 1): a job asking for N cores passes N (engine/runtime/execute_options.h).
  Pool* pool = nullptr;
  std::string pool_group = "hlo";
  int max_threads = 0;
  // Time every instruction (EvalResult::host_ns): a steady_clock read around each.
  bool profile = false;
  // Run chains of f32 elementwise ops as fused loops (engine/hlo/loop_fusion.h): the same bits,
  // without an array per intermediate. Off: one kernel per instruction (the tests compare both).
  bool loop_fusion = true;

  // The share of the pool and the stop these options give one instruction's work, and the
  // options that run on a given share (its pool, group, threads, cancel flag and deadline).
  ParallelContext Parallel() const;
  static EvalOptions On(const ParallelContext& parallel);
};

struct EvalResult {
  std::vector<Value> outputs;  // the entry's result, one per device
  // executions[c][i]: how many lockstep steps ran instruction i of computation c (a while body
  // instruction counts once per iteration of the longest-running device).
  std::vector<std::vector<int64_t>> executions;
  // With EvalOptions::profile: host_ns[c][i], the wall time spent in instruction i of computation
  // c over all its executions (a call, fusion, while or conditional includes what it runs).
  std::vector<std::vector<int64_t>> host_ns;
};

// args[device][parameter]: the entry parameters of each of module.devices() devices.
// INVALID_ARGUMENT when the argument count or a shape does not match the entry's parameters.
Result<EvalResult> Evaluate(const Module& module, const std::vector<std::vector<Value>>& args,
                            const EvalOptions& options = {});

// UNIMPLEMENTED listing every instruction reachable from the entry that the evaluator cannot
// run (opcode, custom_call_target or element type), each with its name and line; OK otherwise.
Status CheckEvaluable(const Module& module);

}  // namespace tpuemu::engine::hlo
