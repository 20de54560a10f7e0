// Prices an HLO module on a TPU slice with the one chip model (engine/chip/chip_model.h), without
// running it (estimate) or with the execution counts of a run (evaluator.h).
//
// Each device of the module (replica_count x num_partitions) is one JAX device: a chip's two
// TensorCores on the megacore generations (v4, v5p), one TensorCore otherwise; the slice must
// have enough of them. Per instruction, on one device:
//  * dot and convolution: the MXUs (DotCost, at Efficiency::mxu: MxuCycles) at MxuPasses of the
//    instruction's operand_precision or algorithm, else options.precision (bf16 and integer
//    operands: one pass);
//  * collectives: CollectiveCycles over the group's chips on the slice's torus (ICI) and its
//    TensorCores on a chip (through HBM), plus HBM;
//  * everything else: the vector units (VectorCost: 1 op per element, 4 for divide/power/
//    remainder, 8 for transcendentals, 2 per reduced element);
//  * HBM traffic (HbmCycles, at Efficiency::hbm) is charged at fusion boundaries: a fusion of an
//  after-optimizations dump reads
//    its operands and writes its result once and its body adds only compute; in a module without
//    fusions an elementwise producer whose users all fuse (elementwise ops, reduce, dot,
//    convolution) is neither written nor re-read;
//  * parameter, constant, tuple, get-tuple-element, bitcast and the -done halves are free.
// Every row costs max(compute, memory) + collective cycles; the step is the sum of rows times
// their counts. Counts: 1 per call; while bodies x trip count (the run's counts, else
// backend_config known_trip_count, else the induction-variable pattern `i < N` with constant
// init and step, else 1 with a warning); conditionals price their most expensive branch.
// HBM peak: liveness over each computation's order (parameters and constants throughout,
// results from definition to last use, callee peaks nested), compared with the device's HBM.
// Errors: INVALID_ARGUMENT when the module needs more devices than the slice has or a shape is
// unbounded; UNIMPLEMENTED listing unsupported instructions unless options.allow_unsupported
// (then they cost zero and options-listed warnings name them). Pure function: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/chip/timing.h"
#include "engine/hardware/hardware.h"
#include "engine/hardware/numerics.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

struct CostOptions {
  Precision precision = Precision::kDefault;
  TimingMode timing_mode = TimingMode::kTpu;
  Dataflow dataflow = Dataflow::kWeightStationary;  // TimingMode::kScaleSim's
  // TensorCores each instruction is split over; 0: a device's own (2 on v4 and v5p, else 1). A
  // graph job's module is one device on the cores the job asks for (engine/frontend/compiler.h).
  // Above 1, a dot weighs splitting its contraction (partial products, then an all-reduce) against
  // its rows, as XLA does, and takes the cheaper.
  int tensorcores = 0;
  bool allow_unsupported = false;
  // From a run (EvalResult::executions); empty: derive counts statically.
  std::vector<std::vector<int64_t>> executions;
};

struct InstructionCost {
  int computation = 0;
  int instruction = 0;
  std::string name;     // "fusion.12" (printed with a %)
  std::string opcode;   // "fusion", "dot", ...
  std::string op_name;  // metadata op_name ("jit(step)/dense/dot_general")
  std::string unit;     // mxu | vpu | ici | none
  int64_t count = 0;    // executions per step
  int64_t cycles = 0;   // one execution: max(compute, memory) + collective
  int64_t compute_cycles = 0;
  int64_t memory_cycles = 0;
  int64_t collective_cycles = 0;
  double flops = 0;                    // one execution
  double mxu_flops = 0;                // of which on the MXUs
  double hbm_bytes = 0;                // one execution
  int passes = 0;                      // MXU bf16 passes (dot/convolution)
  int64_t folds = 0;                   // MXU folds (tiles) over every TensorCore and pass
  SplitKind split = SplitKind::kNone;  // how the work is divided over the TensorCores
  // A dot or convolution (or a fusion holding exactly one): gemm_batch GEMMs of this shape (the
  // convolution as its im2col GEMM per group); {0,0,0} otherwise.
  int64_t gemm_batch = 1;
  GemmShape gemm;
  std::string bound;  // compute | memory | collective
};

struct ModuleCost {
  std::string module;
  std::string accelerator_type;
  int devices = 1;                 // module.devices()
  int tensorcores_per_device = 1;  // 2 on v4/v5p (megacore)
  double clock_hz = 0;
  std::vector<InstructionCost> rows;  // priced instructions, computation by computation
  int64_t cycles = 0;                 // one step on one device
  double seconds = 0;
  double flops = 0;      // one step on one device
  double mxu_flops = 0;  // of which on the MXUs
  double hbm_bytes = 0;
  double mxu_utilization = 0;  // mxu_flops / (cycles * peak of the device's TensorCores)
  int64_t peak_hbm_bytes_per_tensorcore = 0;
  double hbm_capacity_bytes_per_tensorcore = 0;
  bool fits = true;
  // The entry instruction where the peak is reached, and the entry results live there, largest
  // first (for an out-of-memory message that names them).
  int peak_instruction = 0;
  std::vector<int> peak_live;
  // A static price (CostOptions::executions empty) whose every count came from the text: no
  // conditional, no while of unknown trips, no computation reached twice. A run of the module
  // executes exactly these counts, so its price is this one (RunModule does not price again).
  bool counts_exact = false;
  std::vector<std::string> warnings;
};

Result<ModuleCost> PriceModule(const Module& module, const Slice& slice,
                               const CostOptions& options = {});

}  // namespace tpuemu::engine::hlo
