// Runs the check.expect_* ops of a StableHLO module as assertions, as the StableHLO
// interpreter's tests (openxla/stablehlo stablehlo/tests/interpret/*.mlir) use them: the entry
// (a function of no arguments) is lowered with each check's actual and expected values as extra
// outputs (lower.h, checks_as_outputs), evaluated on one device, and compared: eq / eq_const
// bit for bit (NaN equal to NaN), almost_eq within `tolerance` (absolute or relative), close
// within max_ulp_difference ulps.
//
// Errors: those of parsing, lowering and evaluation. A failed check is not an error: it is a
// line in CheckReport::failures. Pure function: thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/hardware/numerics.h"

namespace tpuemu::engine::stablehlo {

struct CheckReport {
  int passed = 0;
  std::vector<std::string> failures;  // "line 12: expect_eq_const: element 3 is 2, expected 4"
};

Result<CheckReport> RunChecks(std::string_view text, Precision precision = Precision::kHighest);

}  // namespace tpuemu::engine::stablehlo
