// Shared by the StableHLO tests: runs a module's check.expect_* ops (engine/stablehlo/checks.h).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "engine/stablehlo/checks.h"

namespace tpuemu::engine::stablehlo {

// Every check passes (and there is at least `min_checks` of them).
inline void ExpectChecksPass(std::string_view text, int min_checks = 1) {
  Result<CheckReport> report = RunChecks(text);
  ASSERT_TRUE(report.ok()) << report.status().message() << "\n" << text;
  for (const std::string& f : report->failures) ADD_FAILURE() << f;
  EXPECT_GE(report->passed, min_checks);
}

}  // namespace tpuemu::engine::stablehlo
