// Fuzzes the engine's JSON program format: bytes -> ParseProgram (engine/program_json.h) ->
// Compile on a small slice -> Execute, with every tensor capped at a few thousand elements so
// an input cannot ask for big work. Properties checked besides "no crash, no leak, no UB":
// a parsed graph survives ProgramToJson -> ParseProgram, a compiled one executes or fails
// with a Status (never throws), and one that executes runs on the HLO evaluator too
// (engine/hlo/graph_program.h: lowering, loop fusion, buffer reuse) with the same output shapes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "engine/compiler.h"
#include "engine/executor.h"
#include "engine/hardware.h"
#include "engine/hlo/graph_program.h"
#include "engine/program_json.h"

using namespace tpuemu;          // NOLINT: a fuzz target's one job
using namespace tpuemu::engine;  // NOLINT

namespace {

constexpr int64_t kMaxElements = 4096;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "program_fuzzer: property violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ParseOptions parse;
  parse.max_ops = 64;
  parse.max_tensor_elements = kMaxElements;
  Result<Graph> graph = ParseProgram(text, parse);
  if (!graph.ok()) return 0;

  Result<Graph> again = ParseProgram(ProgramToJson(*graph).dump(), parse);
  Check(again.ok(), "ParseProgram(ProgramToJson(g)) fails for a parsed g");

  static const Slice slice = Slice::FromAcceleratorType("v4-8").value();
  CompileOptions options;
  options.max_tensor_elements = kMaxElements;
  options.precision = static_cast<Precision>(size % 3);  // DEFAULT, HIGH, HIGHEST
  auto compiled = Compile(*graph, slice, options);
  if (!compiled.ok()) return 0;
  Result<ExecutionResult> run = Execute(**compiled, *graph, {});
  // A Status (unfed parameter, ...) is fine; a crash or UB is not.
  if (!run.ok()) return 0;
  auto lowered = hlo::HloGraphProgram::Lower(*graph);
  Check(lowered.ok(), "a graph the executor runs does not lower to HLO");
  auto on_hlo = (*lowered)->Run(*graph, {}, options.precision);
  Check(on_hlo.ok(), "a graph the executor runs fails on the HLO evaluator");
  Check(on_hlo->size() == run->outputs.size(), "the HLO run has other outputs");
  for (const auto& [id, t] : run->outputs) {
    auto it = on_hlo->find(id);
    Check(it != on_hlo->end() && it->second.shape() == t.shape() && it->second.dtype() == t.dtype(),
          "an HLO output differs in id, shape or dtype");
  }
  return 0;
}
