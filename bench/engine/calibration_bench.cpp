// The cost model against published TPU runs (docs/cost-model.md, "Accuracy"): prints the
// published-runs table (tests/engine/cost/published_runs.cpp) split into the fitting set and the
// validation set, with our estimates and the in-sample and out-of-sample errors for training
// (step time, MFU) and serving (output tokens/s). Not a ctest: run ./bench_engine_calibration
// (a few seconds: it refits the factors on the fitting set).
#include <cstdio>

#include "tests/engine/cost/calibration_report.h"

int main() {
  const tpuemu::engine::cost::CalibrationReport report =
      tpuemu::engine::cost::BuildCalibrationReport();
  std::fputs(report.text.c_str(), stdout);
  return 0;
}
