// How long a full TPU comparison takes (issue 15's target: under 1 s for a llama-7B shaped model on
// every accelerator type with all three sharding strategies). Prints the CPU model, the number of
// plans evaluated and the best/median wall time over the runs, for the automatic comparison
// (dp, fsdp, tp at every degree; remat minimal and full) and for one with all three remat
// policies (three comparisons, remat named). Not a ctest: run ./bench_engine_compare [runs=20].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/cost/compare.h"

namespace {

using tpuemu::engine::cost::Compare;
using tpuemu::engine::cost::CompareOptions;
using tpuemu::engine::cost::ParseTransformerShape;
using tpuemu::engine::cost::Remat;
using tpuemu::engine::cost::TransformerShape;

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

// Runs `body` `runs` times; prints best and median milliseconds.
template <typename F>
void Time(const char* what, int runs, F body) {
  std::vector<double> ms;
  int plans = 0;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    plans = body();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-58s %5d plans  best %7.2f ms  median %7.2f ms  %s\n", what, plans, ms.front(),
              ms[ms.size() / 2], ms[ms.size() / 2] < 1000 ? "(target < 1 s: PASS)" : "(MISS)");
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  std::printf("CPU: %s\n", CpuModel().c_str());
  const TransformerShape llama = ParseTransformerShape({{"preset", "llama2-7b"}}).value();
  const CompareOptions automatic;
  Time("llama2-7b, every type, dp/fsdp/tp, remat auto", runs,
       [&] { return Compare(llama, automatic).value().plans_evaluated; });
  Time("llama2-7b, every type, dp/fsdp/tp, remat none+minimal+full", runs, [&] {
    int plans = 0;
    for (Remat r : {Remat::kNone, Remat::kMinimal, Remat::kFull}) {
      CompareOptions o;
      o.remat = r;
      plans += Compare(llama, o).value().plans_evaluated;
    }
    return plans;
  });
  return 0;
}
