// Fuzzes the engine's JSON program format: bytes -> ParseProgram (engine/program_json.h) ->
// Compile on a small slice -> Execute, with every tensor capped at a few thousand elements so
// an input cannot ask for big work. Properties checked besides "no crash, no leak, no UB":
// a parsed graph survives ProgramToJson -> ParseProgram, and a compiled one executes or fails
// with a Status (never throws).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "engine/compiler.h"
#include "engine/executor.h"
#include "engine/hardware.h"
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
  (void)run;  // a Status (unfed parameter, ...) is fine; a crash or UB is not
  return 0;
}
