// `tpuemu-engine estimate`: what one GEMM, convolution or program would cost on a TPU slice or
// on a bare systolic array, from the timing model in engine/chip/timing.h.
//
//   tpuemu-engine estimate --gemm 4096,4096,4096 --accelerator-type v5litepod-8 --format json
//   tpuemu-engine estimate --conv 224,224,3,7,7,64,2 --padding same --batch 8
//   tpuemu-engine estimate --gemm 256,256,256 --array 128x128 --timing scalesim --dataflow os
//   tpuemu-engine estimate --program mlp.json --accelerator-type v5litepod-4
//   (engine/frontend/program_json.h)
//   tpuemu-engine estimate --hlo step.hlo.txt --accelerator-type v5p-8  (hlo_commands.h)
//
// A --program is parsed (engine/frontend/program_json.h) and compiled for the slice
// (engine/frontend/compiler.h); the report has its totals, peak HBM per TensorCore and one row per
// op. Estimate() validates the options and returns the report (an aligned table or one JSON
// object); on bad input it returns INVALID_ARGUMENT (NOT_FOUND for an unknown accelerator type)
// with a one-line message that names the offending flag. It does not throw.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace tpuemu::cli {

struct EstimateOptions {
  std::string gemm;     // "M,N,K"
  std::string conv;     // "H,W,C,FH,FW,FILTERS[,STRIDE]"
  std::string program;  // path of a JSON program
  int64_t batch = 1;
  std::string padding = "valid";      // valid | same (conv only)
  std::string accelerator_type;       // empty: v4-8 unless --array is given
  std::string array;                  // "128x128": a bare array instead of a slice
  double clock_hz = 1e9;              // bare arrays only
  int cores = 0;                      // TensorCores to use; 0 = all of the slice
  std::string timing = "tpu";         // tpu | scalesim
  std::string dataflow;               // ws | os | is, scalesim only; empty = ws
  std::string precision = "default";  // default | high | highest | f32
  std::string format = "table";       // table | json
};

inline constexpr const char* kDefaultAcceleratorType = "v4-8";

Result<std::string> Estimate(const EstimateOptions& options);

}  // namespace tpuemu::cli
