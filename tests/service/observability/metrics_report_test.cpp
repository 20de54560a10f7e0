// The torch_xla report format (service/observability/metrics_report.h) against the worked examples
// of docs/hardware-model.md §6 and torch's EmitMetricInfo rules.
#include "service/observability/metrics_report.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

TEST(MetricFnTimeTest, WorkedExamplesFromTheReference) {
  EXPECT_EQ(MetricFnTime(369401746001.0), "06m09s402ms746.001us");
  EXPECT_EQ(MetricFnTime(1032778.0), "001ms032.778us");
  EXPECT_EQ(MetricFnTime(512.0), "000.512us");
}

TEST(MetricFnTimeTest, StartsAtTheFirstNonZeroPart) {
  EXPECT_EQ(MetricFnTime(0), "000.000us");
  EXPECT_EQ(MetricFnTime(2e9), "02s000ms000.000us");
  EXPECT_EQ(MetricFnTime(90000.0 * 1e9), "01d01h00m00s000ms000.000us");
}

TEST(MetricFnBytesTest, ScalesBy1024WithTwoDecimals) {
  EXPECT_EQ(MetricFnBytes(512), "512.00B");
  EXPECT_EQ(MetricFnBytes(1536), "1.50KB");
  EXPECT_EQ(MetricFnBytes(3.0 * 1024 * 1024 * 1024), "3.00GB");
  EXPECT_EQ(MetricFnValue(12), "12.00");
}

TEST(RenderMetricTest, OneSampleHasNoRates) {
  ReportMetric m{"CompileTime", MetricUnit::kTime, {{1000, 1032778.0}}};
  EXPECT_EQ(RenderMetric(m),
            "Metric: CompileTime\n"
            "  TotalSamples: 1\n"
            "  Accumulator: 001ms032.778us\n"
            "  Percentiles: 1%=001ms032.778us; 5%=001ms032.778us; 10%=001ms032.778us; "
            "20%=001ms032.778us; 50%=001ms032.778us; 80%=001ms032.778us; 90%=001ms032.778us; "
            "95%=001ms032.778us; 99%=001ms032.778us\n");
}

TEST(RenderMetricTest, RatesAndPercentilesFollowTorch) {
  // 4 samples over 2 s: 1, 2, 3, 4 ms (posted out of order).
  ReportMetric m{"ExecuteTime",
                 MetricUnit::kTime,
                 {{0, 3e6}, {500000000, 1e6}, {1500000000, 4e6}, {2000000000, 2e6}}};
  // ValueRate = 10 ms / 2 s = 5 ms per second; Rate = 4 / 2 s = 2 per second.
  // Percentile index = floor(p * 4) over sorted {1,2,3,4}: 1%..20% -> 0, 50% -> 2, 80..99% -> 3.
  EXPECT_EQ(RenderMetric(m),
            "Metric: ExecuteTime\n"
            "  TotalSamples: 4\n"
            "  Accumulator: 010ms000.000us\n"
            "  ValueRate: 005ms000.000us / second\n"
            "  Rate: 2 / second\n"
            "  Percentiles: 1%=001ms000.000us; 5%=001ms000.000us; 10%=001ms000.000us; "
            "20%=001ms000.000us; 50%=003ms000.000us; 80%=004ms000.000us; 90%=004ms000.000us; "
            "95%=004ms000.000us; 99%=004ms000.000us\n");
}

TEST(RenderMetricTest, RatesUseOnlyTheLast1024Samples) {
  ReportMetric m{"ExecuteTime", MetricUnit::kTime, {}};
  for (int i = 0; i < 2048; ++i) {
    // The first 1024 are 1 us, the retained last 1024 are 2 us, one per millisecond.
    m.samples.push_back({int64_t{i} * 1000000, i < 1024 ? 1e3 : 2e3});
  }
  std::string text = RenderMetric(m);
  EXPECT_NE(text.find("  TotalSamples: 2048\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  Accumulator: 003ms072.000us\n"), std::string::npos) << text;
  EXPECT_NE(text.find("1%=002.000us"), std::string::npos) << text;  // old samples are gone
  // 1024 samples over 1023 ms.
  EXPECT_NE(text.find("  Rate: 1000.98 / second\n"), std::string::npos) << text;
}

TEST(RenderMetricsReportTest, NameOrderArenasAndZerosSkipped) {
  MetricsArena lazy;
  lazy.counters = {{"UncachedCompile", 2}, {"CachedCompile", 0}, {"MarkStep", 5}};
  MetricsArena runtime;
  runtime.metrics = {{"TransferToDeviceTime", MetricUnit::kTime, {{0, 512}}},
                     {"CompileTime", MetricUnit::kTime, {}},
                     {"InboundData", MetricUnit::kBytes, {{0, 2048}}}};
  runtime.counters = {{"CreateCompileHandles", 2}};
  std::string text = RenderMetricsReport({lazy, runtime});
  EXPECT_EQ(text.find("CachedCompile"), std::string::npos);  // Value 0
  EXPECT_EQ(text.find("CompileTime"), std::string::npos);    // no samples
  size_t mark = text.find("Counter: MarkStep\n  Value: 5\n");
  size_t uncached = text.find("Counter: UncachedCompile\n  Value: 2\n");
  size_t inbound = text.find("Metric: InboundData\n  TotalSamples: 1\n  Accumulator: 2.00KB\n");
  size_t transfer = text.find("Metric: TransferToDeviceTime\n");
  size_t handles = text.find("Counter: CreateCompileHandles\n");
  ASSERT_NE(mark, std::string::npos) << text;
  ASSERT_NE(uncached, std::string::npos) << text;
  ASSERT_NE(inbound, std::string::npos) << text;
  ASSERT_NE(transfer, std::string::npos) << text;
  ASSERT_NE(handles, std::string::npos) << text;
  // Lazy arena (counters by name) before the runtime arena (metrics by name, then counters).
  EXPECT_LT(mark, uncached);
  EXPECT_LT(uncached, inbound);
  EXPECT_LT(inbound, transfer);
  EXPECT_LT(transfer, handles);
}

}  // namespace
}  // namespace tpuemu::service
