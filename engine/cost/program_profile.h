// Programs as a source of a comparison: the JSON IR, the built-in workloads (both as an
// engine::Graph) and HLO modules (engine/hlo/).
//
// ProgramFigures is the hook every program importer fills: per-step FLOPs, bytes, parameter,
// gradient and activation bytes, and a cost per instruction. ProfileFromFigures turns it into
// the StepProfile the estimator prices; the comparison, the CLI and the endpoint take it from
// there (compare.h: CompareSource::kProgram).
//
// FiguresFromGraph prices a Graph with the compiler (engine/frontend/compiler.h: the HLO cost model
// over the module the graph lowers to, summed per graph op; DEFAULT precision, one TensorCore of a
// v5p — the per-op FLOPs, bytes and GEMM shapes do not depend on the generation): the first
// parameter is the input batch (its leading dimension is the global batch), an int32 parameter with
// the same leading dimension holds labels; every other parameter and constant is a weight. An op
// carries the batch when one of its inputs does. Outputs shaped like a weight are its gradients
// (all-reduced under data parallelism). Stateless: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/cost/step_profile.h"
#include "engine/frontend/ir.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::cost {

// One instruction with its cost at the program's global batch.
struct InstructionCost {
  std::string name;
  bool on_mxu = false;     // a dot or convolution
  double flops = 0;        // MXU flops (on_mxu)
  double vpu_ops = 0;      // vector-unit element-ops (otherwise)
  double hbm_bytes = 0;    // operands read + result written
  int64_t gemm_batch = 1;  // on_mxu: its GEMM, when known, for the MXU fold model
  GemmShape gemm;
  int passes = 1;             // on_mxu: bf16 MXU passes
  bool carries_batch = true;  // its work scales with the batch (false: weights-only work)
  // on_mxu: the GEMM dimension the batch lies along; kNone: guessed from the shapes.
  GemmDim batch_dim = GemmDim::kNone;
};

struct ProgramFigures {
  std::string name;
  std::string source = "program";  // "program", "workload", "hlo"
  std::string unit = "samples";
  int64_t global_batch = 1;   // the batch the figures are for
  double units_per_step = 0;  // 0: global_batch
  double model_flops = 0;     // 0: the sum of the instructions' MXU flops
  double parameter_count = 0;
  double parameter_bytes = 0;   // weights as stored
  double gradient_bytes = 0;    // all-reduced over data-parallel replicas each step; 0: none
  double activation_bytes = 0;  // peak live bytes besides the weights, at global_batch
  std::vector<InstructionCost> instructions;
};

StepProfile ProfileFromFigures(const ProgramFigures& figures);

// `batch` 0: the first parameter's leading dimension. INVALID_ARGUMENT if the graph does not
// compile (the compiler's message), or names no parameter and batch is 0.
Result<ProgramFigures> FiguresFromGraph(const Graph& graph, int64_t batch = 0);

// An HLO module priced by its cost model (engine/hlo/cost_model.h, estimate counts: while bodies
// times their trip counts, DEFAULT precision). Each MXU or vector row becomes an instruction
// ("%fusion.12") with its FLOPs, vector ops and HBM bytes times its count, and its GEMM;
// collectives are left to the comparison (its gradient all-reduce and strategy). Weights: the
// entry parameter leaves the output leaves mirror in order (each output leaf takes the next
// parameter leaf of its type and dims: a training step returns its weights updated; their bytes
// are the gradients), or, when none does (inference), every leaf but the last array of rank >= 1
// (JAX passes the batch last); plus the non-scalar constants. The
// other leaves are data: the batch is `batch`, or the first data array's leading dimension. A
// module of several devices is taken as data parallel: the global batch and every batch-carrying
// row are the device's times the devices (weights-only rows count once). Activations: the
// cost model's HBM peak per device less the weights, times the devices.
// Errors: those of PriceModule (UNIMPLEMENTED for unsupported instructions unless
// allow_unsupported, which prices them at zero).
Result<ProgramFigures> FiguresFromHloModule(const hlo::Module& module, int64_t batch = 0,
                                            bool allow_unsupported = false);

}  // namespace tpuemu::engine::cost
