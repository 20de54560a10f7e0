// The torch_xla metrics report text format (docs/hardware-model.md §6; the code
// it reproduces is torch_xla/csrc/runtime/metrics.cc and torch/csrc/lazy/core/metrics.cpp:
// EmitMetricInfo, EmitCounterInfo, MetricFnTime/Bytes/Value).
//
//   Metric: CompileTime
//     TotalSamples: 202
//     Accumulator: 06m09s402ms746.001us
//     ValueRate: 778ms572.062us / second
//     Rate: 0.425201 / second
//     Percentiles: 1%=001ms032.778us; 5%=001ms061.283us; ...; 99%=21s103ms853.173us
//   Counter: CachedCompile
//     Value: 395
//
// A report is a list of arenas (torch's lazy arena, then torch_xla's runtime arena), each printed
// as its metrics then its counters in name order, skipping metrics without samples and counters
// at zero. Only the last kMaxRetainedSamples samples (XLA_METRICS_SAMPLES) feed the rates and
// percentiles; TotalSamples and Accumulator count all. ValueRate/Rate appear only when the
// retained samples span a positive time. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tpuemu::service {

inline constexpr std::size_t kMaxRetainedSamples = 1024;

// `ns` nanoseconds as "06m09s402ms746.001us" (each part printed rounded, remainder floored: the
// torch quirk kept on purpose).
std::string MetricFnTime(double ns);
// Bytes as "1.50MB" (1024-based, 2 decimals).
std::string MetricFnBytes(double bytes);
// "12.00".
std::string MetricFnValue(double value);

enum class MetricUnit { kTime, kBytes, kValue };

struct MetricSample {
  int64_t timestamp_ns = 0;
  double value = 0;  // ns for kTime, bytes for kBytes
};

struct ReportMetric {
  std::string name;
  MetricUnit unit = MetricUnit::kTime;
  std::vector<MetricSample> samples;  // in posting order
};

struct ReportCounter {
  std::string name;
  int64_t value = 0;
};

struct MetricsArena {
  std::vector<ReportMetric> metrics;
  std::vector<ReportCounter> counters;
};

// One "Metric: ..." block (samples must be non-empty).
std::string RenderMetric(const ReportMetric& metric);
std::string RenderCounter(const ReportCounter& counter);
// The whole report: arenas in order, each sorted by name with empty entries skipped.
std::string RenderMetricsReport(const std::vector<MetricsArena>& arenas);

}  // namespace tpuemu::service
