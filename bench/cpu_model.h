// The "model name" of /proc/cpuinfo, which every benchmark prints next to its figures (our
// machines differ from run to run). Header-only: bench_jobs links no engine code.
#pragma once

#include <fstream>
#include <string>

namespace tpuemu::bench {

inline std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

}  // namespace tpuemu::bench
