// `tpuemu-engine estimate --hlo FILE` and `tpuemu-engine run --hlo FILE`: an XLA HLO text module
// priced on a TPU slice without running it, or run on the emulated devices (TPU numerics) and
// priced with the run's execution counts (engine/hlo/program.h, docs/hlo.md).
//
//   tpuemu-engine estimate --hlo train_step.txt --accelerator-type v5p-8 --top 10
//   tpuemu-engine run --hlo mlp.txt --seed 7 --params inputs/ --output-dir out/ --format json
//
// The report: the module's totals (cycles, seconds, FLOPs, MXU utilization, HBM bytes, HBM peak
// per TensorCore against capacity and whether it fits), warnings, and the `top` most expensive
// instructions (%name, opcode, metadata op_name, unit, count, cycles per execution and in total,
// share of the step). `run` adds one summary per output array and can write the outputs as .npy
// files. Errors: INVALID_ARGUMENT naming the flag, or the engine's status message (syntax errors
// with line and column, unsupported instructions with their names and lines). Never throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpuemu::cli {

struct HloOptions {
  std::string hlo;                    // path of the HLO text file
  std::string accelerator_type;       // empty: v4-8
  std::string precision = "default";  // dots/convolutions that name none: default|high|highest|f32
  std::string timing = "tpu";         // tpu | scalesim
  std::string format = "table";       // table | json
  bool allow_unsupported = false;     // price custom-calls etc. at zero with a warning
  int top = 20;                       // rows in the per-instruction profile; 0 = all
  // run only
  uint64_t seed = 0;
  std::string params_dir;            // N.npy per parameter (engine/hlo/inputs.h)
  std::vector<std::string> values;   // "N=v0,v1,..." per parameter
  std::string output_dir;            // write out_<leaf>[.device<D>].npy
  bool distinct_per_device = false;  // seeded parameters differ per device
};

Result<std::string> EstimateHloCommand(const HloOptions& options);
Result<std::string> RunHloCommand(const HloOptions& options);

}  // namespace tpuemu::cli
