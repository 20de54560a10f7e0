// Fuzzes the engine's JSON program format: bytes -> ParseProgram (engine/frontend/program_json.h)
// -> Compile on a small slice -> a job's step on the HLO evaluator
// (engine/frontend/graph_program.h: lowering, loop fusion, fused kernels, buffer reuse), with every
// tensor capped at a few thousand elements so an input cannot ask for big work. Properties checked
// besides "no crash, no leak, no UB": a parsed graph survives ProgramToJson -> ParseProgram, a
// valid one lowers to HLO (Compile does), its run succeeds or fails with a Status (never throws),
// and a run that succeeds returns every graph output with the graph's shape and dtype.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "engine/frontend/compiler.h"
#include "engine/frontend/graph_program.h"
#include "engine/frontend/program_json.h"
#include "engine/hardware/hardware.h"

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
  if (!compiled.ok()) {
    // A bad graph or one too big for HBM is refused; a valid one always lowers, and its lowering
    // parses (INTERNAL otherwise: a bug in from_graph).
    Check(compiled.status().code() != StatusCode::kInternal &&
              compiled.status().message().find("no HLO lowering") == std::string::npos,
          "a valid graph does not lower to HLO");
    return 0;
  }
  Check((*compiled)->lowered != nullptr, "a compiled program has no lowered module");
  auto run = (*compiled)->lowered->Run(*graph, {}, options.precision);
  // A Status (an unfed parameter, a label out of range, ...) is fine; a crash or UB is not.
  if (!run.ok()) return 0;
  Check(run->size() == graph->outputs().size(), "the run returns other outputs than the graph's");
  for (const std::string& id : graph->outputs()) {
    auto it = run->find(id);
    const Op* op = graph->Find(id);
    Check(it != run->end() && op != nullptr && it->second.shape() == op->shape &&
              it->second.dtype() == op->dtype,
          "an output differs from the graph's in id, shape or dtype");
  }
  return 0;
}
