// How the cost reports write numbers: one printf-style formatter and GiB with one decimal, shared
// by the training and serving estimates and their reports (their problem strings and tables).
#pragma once

#include <cstdio>
#include <string>

#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {

// `v` through a printf format with one double conversion ("%.1f", "%.2f ms").
inline std::string Number(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "15.8 GiB".
inline std::string Gib(double bytes) { return Number(bytes / kGiB, "%.1f GiB"); }

}  // namespace tpuemu::engine::cost
