// How fast the timing model answers "how many cycles would this GEMM take?": DotCost (TPU mode,
// whole v4-8 slice) and ScaleSimGemm over a spread of shapes. The target is 1,000,000 estimates/s;
// SCALE-Sim v2 itself needs about 24 s of simulation for one 1024³ GEMM (reference §2), so the
// summary also prints the speed-up over that figure (an external figure, not measured here).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench/engine/raw_gemm.h"
#include "engine/chip/timing.h"
#include "engine/hardware/hardware.h"

namespace {

using tpuemu::engine::Dataflow;
using tpuemu::engine::GemmShape;

constexpr double kTargetEstimatesPerSecond = 1e6;
constexpr double kScaleSimSecondsFor1024Cube = 24.0;

// Shapes from 1 to 16384 per dimension, log-uniform, so the fold counts vary over many orders.
const std::vector<GemmShape>& Shapes() {
  static const std::vector<GemmShape> shapes = [] {
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> log2(0, 14);
    std::vector<GemmShape> v;
    for (int i = 0; i < 4096; ++i) {
      auto dim = [&] { return int64_t{1} << log2(rng); };
      v.push_back({dim() + (i % 7), dim(), dim() + (i % 3)});
    }
    return v;
  }();
  return shapes;
}

void BM_DotCostTpu(benchmark::State& state) {
  const auto& spec = tpuemu::engine::Spec(tpuemu::engine::Generation::kV4);
  const auto& shapes = Shapes();
  size_t i = 0;
  for (auto _ : state) {
    const GemmShape& s = shapes[i++ & (shapes.size() - 1)];
    benchmark::DoNotOptimize(tpuemu::engine::DotCost(spec, 1 + (i & 3), s, 1, 2, 8));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DotCostTpu);

void BM_ScaleSimGemm(benchmark::State& state) {
  const auto& shapes = Shapes();
  const Dataflow dataflows[] = {Dataflow::kWeightStationary, Dataflow::kOutputStationary,
                                Dataflow::kInputStationary};
  size_t i = 0;
  for (auto _ : state) {
    const GemmShape& s = shapes[i & (shapes.size() - 1)];
    benchmark::DoNotOptimize(tpuemu::engine::ScaleSimGemm(s, {128, 128}, dataflows[i % 3]));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScaleSimGemm);

void BM_TpuMxuGemm1024Cube(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(tpuemu::engine::TpuMxuGemm({1024, 1024, 1024}, {128, 128}));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TpuMxuGemm1024Cube);

// Prints as usual and remembers items/s per benchmark for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      auto it = run.counters.find("items_per_second");
      if (it != run.counters.end()) items_per_second_[run.benchmark_name()] = it->second;
    }
  }
  const std::map<std::string, double>& items_per_second() const { return items_per_second_; }

 private:
  std::map<std::string, double> items_per_second_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  std::printf("\nCPU: %s\n", tpuemu::bench::CpuModel().c_str());
  std::printf("Target %.0f estimates/s; SCALE-Sim v2 needs ~%.0f s for one 1024^3 GEMM.\n",
              kTargetEstimatesPerSecond, kScaleSimSecondsFor1024Cube);
  for (const auto& [name, rate] : reporter.items_per_second()) {
    std::printf("%-24s %14.0f estimates/s  = %6.2fx the target  = %.3gx faster than SCALE-Sim\n",
                name.c_str(), rate, rate / kTargetEstimatesPerSecond,
                rate * kScaleSimSecondsFor1024Cube);
  }
  return 0;
}
