// Wall-clock helpers: RFC 3339 timestamps as Google renders them and unix milliseconds for due
// times.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpuemu::service {

using WallTime = std::chrono::system_clock::time_point;

// "2024-04-01T12:34:56.123456Z" (UTC, microseconds), the form the real API returns.
std::string FormatRfc3339(WallTime t);
inline std::string NowRfc3339() { return FormatRfc3339(std::chrono::system_clock::now()); }
int64_t ToUnixMs(WallTime t);
inline int64_t NowUnixMs() { return ToUnixMs(std::chrono::system_clock::now()); }
// "2024-04-01T12:34:56.123Z" / "…Z" / "…+02:00" (RFC 3339, as google.protobuf.Timestamp's JSON
// form) -> unix ms. INVALID_ARGUMENT naming `field` otherwise.
Result<int64_t> ParseRfc3339Ms(std::string_view text, std::string_view field);
// "3600s", "1.5s" (google.protobuf.Duration's JSON form) -> ms. INVALID_ARGUMENT naming `field`
// for anything else, negative durations included.
Result<int64_t> ParseDurationMs(std::string_view text, std::string_view field);
// 90000 -> "90s", 1500 -> "1.500s": google.protobuf.Duration's JSON form.
std::string FormatDurationMs(int64_t ms);

}  // namespace tpuemu::service
