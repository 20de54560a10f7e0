// The compiler: validates a Graph against a Slice and CompileOptions, lowers it to the HLO module
// its jobs run (engine/frontend/from_graph.h) and prices and plans that module with the one cost
// model (engine/hlo/cost_model.h), the same an `hlo` job is priced with.
//
// Per op an OpPlan: the sum of its instructions' rows (each instruction carries its graph op in
// metadata op_name), i.e. the MXU GEMM of a dot or convolution at MxuPasses(precision) bf16
// passes, vector ops on the VPU, HBM traffic at fusion boundaries, and the split over
// CompileOptions::tensorcores (a dot weighs rows against its contraction plus an all-reduce).
// Totals: the module's cycles, seconds, flops, HBM bytes and MXU utilization. Memory: the cost
// model's peak live HBM bytes per TensorCore. A program that does not fit gets XLA's
// RESOURCE_EXHAUSTED text ("XLA:TPU compile permanent error. Ran out of memory in memory space
// hbm. Used 18.52G of 15.48G hbm. Exceeded hbm capacity by 3.04G.", G = GiB) plus the largest
// tensors live at the peak, named by their graph ops. Host memory: the evaluator's liveness
// sweep over the module (engine/hlo/host_memory.h).
//
// A CompiledProgram depends on the graph's STRUCTURE only (kinds, ids, wiring, attributes, shapes,
// dtypes), never on constant values or seeds: a run takes those from the Graph it is given, so
// one compiled program serves every graph with the same StructureKey (compile_cache.h).
// Errors: INVALID_ARGUMENT (bad graph/options, a tensor above max_tensor_elements, a graph that
// does not lower), RESOURCE_EXHAUSTED (HBM). Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/chip/timing.h"
#include "engine/frontend/ir.h"
#include "engine/hardware/hardware.h"
#include "engine/hardware/numerics.h"

namespace tpuemu::engine {

namespace hlo {
class HloGraphProgram;
}  // namespace hlo

struct CompileOptions {
  Precision precision = Precision::kDefault;
  int tensorcores = 1;  // TensorCores each op is split across; 1..slice.tensorcores()
  TimingMode timing_mode = TimingMode::kTpu;
  Dataflow dataflow = Dataflow::kWeightStationary;  // used by TimingMode::kScaleSim
  int64_t max_tensor_elements = int64_t{1} << 26;
};

struct OpPlan {
  int op_index = 0;
  std::string id;
  OpKind kind = OpKind::kParameter;
  OpCost cost;  // its instructions' rows summed; cost.folds = MXU tiles (0 on the vector unit)
  bool on_mxu = false;
  int64_t batch = 1;  // matmul ops: GEMMs of shape `gemm`, `batch` times
  GemmShape gemm;
  SplitKind split = SplitKind::kNone;
  int last_use = 0;          // index of the last op reading this result (ops.size() = kept)
  int64_t result_bytes = 0;  // device bytes of the result (bf16 = 2 per element)
};

struct ProgramTotals {
  int64_t cycles = 0;
  double seconds = 0;
  double flops = 0;
  double hbm_bytes = 0;
  double mxu_utilization = 0;  // flops / (cycles · peak flops per cycle of the TensorCores used)
};

struct CompiledProgram {
  std::string name;
  std::string structure_key;  // StructureKey(graph): what an executing graph must match
  uint64_t structure_hash = 0;
  CompileOptions options;
  Generation generation = Generation::kV4;
  std::string accelerator_type;  // the slice it was compiled for, e.g. "v4-8"
  std::vector<OpPlan> plans;     // one per op, in graph order
  std::vector<std::string> outputs;
  ProgramTotals totals;
  int64_t peak_hbm_bytes_per_tensorcore = 0;
  double hbm_capacity_bytes_per_tensorcore = 0;
  int peak_op_index = 0;  // where the peak is reached
  // The graph lowered to HLO (engine/frontend/graph_program.h): what the plan prices and a job's
  // steps run. Like the rest of the plan it depends on the structure only: constants and seeds are
  // fed to it at each run.
  std::shared_ptr<const hlo::HloGraphProgram> lowered;
  // Upper bound of the host bytes one run of `lowered` holds at its peak: the evaluator's liveness
  // sweep over the module (engine/hlo/host_memory.h).
  int64_t peak_host_bytes = 0;
  double compile_seconds = 0;
  // What this process runs the MXU ops on (GemmKernelName()), for a job's compile line.
  std::string gemm_kernel;
};

Result<std::shared_ptr<const CompiledProgram>> Compile(const Graph& graph, const Slice& slice,
                                                       const CompileOptions& options);

// The graph's structure as text (no constant values, no seeds) and its 64-bit FNV-1a hash.
std::string StructureKey(const Graph& graph);
uint64_t HashKey(std::string_view key);
// INVALID_ARGUMENT unless options are valid for slice (shared by Compile and the cache).
Status ValidateOptions(const Slice& slice, const CompileOptions& options);

}  // namespace tpuemu::engine
