#include "cli/tpuemu_engine/app.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/tpuemu_engine/compare.h"
#include "cli/tpuemu_engine/estimate.h"
#include "cli/tpuemu_engine/hlo_commands.h"

namespace tpuemu::cli {
namespace {

void AddHloFlags(CLI::App* cmd, HloOptions& h) {
  cmd->add_flag("--allow-unsupported", h.allow_unsupported,
                "HLO: price custom-calls and other unsupported instructions at zero (warning)");
  cmd->add_option("--top", h.top,
                  "HLO: instructions in the profile, most expensive first "
                  "(default 20, 0 = all)");
}

}  // namespace

int RunEngineCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"tpuemu-engine: the tpuemu engine's offline tools"};
  app.require_subcommand(1);
  EstimateOptions o;
  HloOptions h;
  CLI::App* estimate =
      app.add_subcommand("estimate",
                         "Cycles, seconds, FLOPs, MXU utilization and HBM bytes of a GEMM, conv, "
                         "JSON program or HLO module");
  estimate->add_option("--gemm", o.gemm, "GEMM M,N,K ([MxK]·[KxN])");
  estimate->add_option("--conv", o.conv, "NHWC conv H,W,C,FH,FW,FILTERS[,STRIDE]");
  estimate->add_option("--program", o.program, "JSON program file");
  estimate->add_option("--hlo", h.hlo,
                       "XLA HLO text or StableHLO module (docs/hlo.md, docs/stablehlo.md)");
  estimate->add_option("--batch", o.batch, "batch size (default 1)");
  estimate->add_option("--padding", o.padding, "conv padding: same|valid (default valid)");
  estimate->add_option(
      "--accelerator-type", o.accelerator_type,
      std::string("TPU type, e.g. v5litepod-8 (default ") + kDefaultAcceleratorType + ")");
  estimate->add_option("--array", o.array, "a bare systolic array ROWSxCOLS instead of a TPU");
  estimate->add_option("--clock-hz", o.clock_hz, "clock of a bare --array (default 1e9)");
  estimate->add_option("--cores", o.cores, "TensorCores to use (default: all of the type)");
  estimate->add_option("--timing", o.timing, "tpu|scalesim (default tpu)");
  estimate->add_option("--dataflow", o.dataflow, "ws|os|is, scalesim only (default ws)");
  estimate->add_option("--precision", o.precision, "default|high|highest|f32");
  estimate->add_option("--format", o.format, "table|json (default table)");
  AddHloFlags(estimate, h);

  HloOptions r;
  CLI::App* run = app.add_subcommand(
      "run", "Execute an HLO module with TPU numerics on the emulated devices and price the run");
  run->add_option("--hlo", r.hlo,
                  "XLA HLO text or StableHLO module (docs/hlo.md, docs/stablehlo.md)")
      ->required();
  run->add_option("--accelerator-type", r.accelerator_type,
                  std::string("TPU type (default ") + kDefaultAcceleratorType + ")");
  run->add_option("--precision", r.precision,
                  "dots/convolutions without operand_precision: default|high|highest|f32");
  run->add_option("--seed", r.seed, "seed of seeded parameters, elided constants and rng");
  run->add_option("--params", r.params_dir, "directory of N.npy parameter files");
  run->add_option("--value", r.values, "N=v0,v1,...: values of parameter N (repeatable)");
  run->add_option("--output-dir", r.output_dir, "write every output array as .npy here");
  run->add_flag("--distinct-per-device", r.distinct_per_device,
                "seeded parameters differ per device");
  run->add_option("--format", r.format, "table|json (default table)");
  AddHloFlags(run, r);
  CompareCliOptions compare_options;
  CLI::App* compare = AddCompareCommand(app, compare_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e, out, err);
  }
  const bool is_run = run->parsed();
  const bool comparing = compare->parsed();
  Result<std::string> text = Status::Internal("no subcommand");
  if (comparing) {
    text = RunCompare(compare_options);
  } else if (is_run) {
    text = RunHloCommand(r);
  } else if (!h.hlo.empty()) {
    if (!o.gemm.empty() || !o.conv.empty() || !o.program.empty() || !o.array.empty()) {
      text = Status::InvalidArgument("--hlo excludes --gemm, --conv, --program and --array");
    } else {
      h.accelerator_type = o.accelerator_type;
      h.precision = o.precision;
      h.timing = o.timing;
      h.format = o.format;
      text = EstimateHloCommand(h);
    }
  } else {
    text = Estimate(o);
  }
  if (!text.ok()) {
    err << "tpuemu-engine "
        << (comparing ? "compare"
            : is_run  ? "run"
                      : "estimate")
        << ": " << text.status().message() << "\n";
    return 2;
  }
  out << *text;
  return 0;
}

}  // namespace tpuemu::cli
