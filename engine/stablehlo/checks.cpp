#include "engine/stablehlo/checks.h"

#include <cmath>
#include <cstring>

#include "engine/hlo/evaluator.h"
#include "engine/stablehlo/lower.h"
#include "engine/stablehlo/parser.h"

namespace tpuemu::engine::stablehlo {
namespace {

// Distance in ulps between two floats of the same type (f32's bit patterns; bf16/f16 held in
// f32 count f32 ulps scaled to their mantissa).
int64_t UlpDistance(float a, float b, hlo::PrimitiveType type) {
  auto ordered = [](float x) {
    int32_t i;
    std::memcpy(&i, &x, sizeof i);
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  int64_t d = std::llabs(ordered(a) - ordered(b));
  if (type == hlo::PrimitiveType::kBF16) d >>= 16;
  if (type == hlo::PrimitiveType::kF16) d >>= 13;
  return d;
}

std::string Compare(const Check& c, const hlo::Array& actual, const hlo::Array& expected) {
  if (actual.dims != expected.dims || actual.type != expected.type) {
    return "actual " + actual.shape().ToString() + ", expected " + expected.shape().ToString();
  }
  for (int64_t k = 0; k < actual.size(); ++k) {
    const double x = actual.GetDouble(k), y = expected.GetDouble(k);
    bool same;
    if (!actual.floating()) {
      same = actual.i[static_cast<size_t>(k)] == expected.i[static_cast<size_t>(k)];
    } else if (std::isnan(x) || std::isnan(y)) {
      same = std::isnan(x) && std::isnan(y);
    } else if (c.kind.rfind("almost_eq", 0) == 0) {
      same = std::fabs(x - y) <= c.tolerance || std::fabs(x - y) <= c.tolerance * std::fabs(y);
    } else if (c.kind.rfind("close", 0) == 0) {
      same = UlpDistance(actual.f[static_cast<size_t>(k)], expected.f[static_cast<size_t>(k)],
                         actual.type) <= c.max_ulp_difference;
    } else {
      same = std::memcmp(&actual.f[static_cast<size_t>(k)], &expected.f[static_cast<size_t>(k)],
                         sizeof(float)) == 0 ||
             x == y;  // +0 == -0 as the interpreter's expect_eq on floats
    }
    if (!same) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "element %lld is %.9g, expected %.9g",
                    static_cast<long long>(k), x, y);
      return buf;
    }
  }
  return "";
}

}  // namespace

Result<CheckReport> RunChecks(std::string_view text, Precision precision) {
  Result<ModuleAst> ast = ParseText(text);
  if (!ast.ok()) return ast.status();
  LowerOptions options;
  options.checks_as_outputs = true;
  Result<Lowered> lowered = Lower(*ast, options);
  if (!lowered.ok()) return lowered.status();
  const hlo::Computation& entry = lowered->module.entry_computation();
  if (!entry.parameters.empty()) {
    return Status::InvalidArgument("RunChecks runs an entry without arguments");
  }
  TPUEMU_RETURN_IF_ERROR(hlo::CheckEvaluable(lowered->module));
  hlo::EvalOptions eval;
  eval.precision = precision;
  const int64_t devices = lowered->module.devices();
  std::vector<std::vector<hlo::Value>> args(static_cast<size_t>(devices));
  Result<hlo::EvalResult> run = hlo::Evaluate(lowered->module, args, eval);
  if (!run.ok()) return run.status();
  std::vector<const hlo::Array*> outputs;
  run->outputs[0].CollectArrays(outputs);
  CheckReport report;
  const size_t base = outputs.size() - 2 * lowered->checks.size();
  for (size_t k = 0; k < lowered->checks.size(); ++k) {
    const Check& c = lowered->checks[k];
    const std::string bad = Compare(c, *outputs[base + 2 * k], *outputs[base + 2 * k + 1]);
    if (bad.empty()) {
      ++report.passed;
    } else {
      report.failures.push_back("line " + std::to_string(c.line) + ": expect_" + c.kind + ": " +
                                bad);
    }
  }
  return report;
}

}  // namespace tpuemu::engine::stablehlo
