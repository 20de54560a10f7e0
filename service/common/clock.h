// Wall-clock helpers: RFC 3339 timestamps as Google renders them and unix milliseconds for due
// times.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace tpuemu::service {

using WallTime = std::chrono::system_clock::time_point;

// "2024-04-01T12:34:56.123456Z" (UTC, microseconds), the form the real API returns.
std::string FormatRfc3339(WallTime t);
inline std::string NowRfc3339() { return FormatRfc3339(std::chrono::system_clock::now()); }
int64_t ToUnixMs(WallTime t);
inline int64_t NowUnixMs() { return ToUnixMs(std::chrono::system_clock::now()); }

}  // namespace tpuemu::service
