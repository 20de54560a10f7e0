// tpuemu-engine's command line: parses argv with CLI11 and runs the subcommand.
//   estimate  what a GEMM, convolution, JSON program or HLO module costs (estimate.h,
//             hlo_commands.h)
//   run       executes an HLO module with TPU numerics and prices the run (hlo_commands.h)
// Prints the report to `out` or a one-line message to `err`; returns 0 on success, 2 for bad
// arguments or a failed run, CLI11's own codes for parse errors. Never throws.
#pragma once

#include <iosfwd>

namespace tpuemu::cli {

int RunEngineCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace tpuemu::cli
