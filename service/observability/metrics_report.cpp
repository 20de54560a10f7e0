#include "service/observability/metrics_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

namespace tpuemu::service {
namespace {

// XLA_METRICS_PERCENTILES' default.
constexpr std::array kPercentiles = {0.01, 0.05, 0.1, 0.2, 0.5, 0.8, 0.9, 0.95, 0.99};

std::string Repr(MetricUnit unit, double value) {
  switch (unit) {
    case MetricUnit::kTime:
      return MetricFnTime(value);
    case MetricUnit::kBytes:
      return MetricFnBytes(value);
    case MetricUnit::kValue:
      break;
  }
  return MetricFnValue(value);
}

}  // namespace

std::string MetricFnValue(double value) {
  std::ostringstream ss;
  ss.precision(2);
  ss << std::fixed << value;
  return ss.str();
}

std::string MetricFnBytes(double value) {
  static constexpr std::array<const char*, 6> kSuffixes = {"B", "KB", "MB", "GB", "TB", "PB"};
  size_t suffix = 0;
  for (; suffix + 1 < kSuffixes.size() && value >= 1024.0; ++suffix) value /= 1024.0;
  std::ostringstream ss;
  ss.precision(2);
  ss << std::fixed << value << kSuffixes[suffix];
  return ss.str();
}

std::string MetricFnTime(double value) {
  struct TimePart {
    const char* suffix;
    double scaler;
    int width;
    int precision;
  };
  static constexpr std::array<TimePart, 6> kParts = {{{"d", 86400.0 * 1e9, 2, 0},
                                                      {"h", 3600.0 * 1e9, 2, 0},
                                                      {"m", 60.0 * 1e9, 2, 0},
                                                      {"s", 1e9, 2, 0},
                                                      {"ms", 1e6, 3, 0},
                                                      {"us", 1e3, 7, 3}}};
  int count = 0;
  std::ostringstream ss;
  for (size_t i = 0; i < kParts.size(); ++i) {
    const TimePart& part = kParts[i];
    double ctime = value / part.scaler;
    if (ctime >= 1.0 || count > 0 || i + 1 == kParts.size()) {
      ss.precision(part.precision);
      ss.width(part.width);
      ss.fill('0');
      ss << std::fixed << ctime << part.suffix;
      value -= std::floor(ctime) * part.scaler;
      ++count;
    }
  }
  return ss.str();
}

std::string RenderMetric(const ReportMetric& metric) {
  double accumulator = 0;
  for (const MetricSample& s : metric.samples) accumulator += s.value;
  std::vector<MetricSample> samples(
      metric.samples.end() -
          static_cast<std::ptrdiff_t>(std::min(metric.samples.size(), kMaxRetainedSamples)),
      metric.samples.end());
  std::ostringstream ss;
  ss << "Metric: " << metric.name << "\n";
  ss << "  TotalSamples: " << metric.samples.size() << "\n";
  ss << "  Accumulator: " << Repr(metric.unit, accumulator) << "\n";
  if (!samples.empty()) {
    double total = 0;
    for (const MetricSample& s : samples) total += s.value;
    int64_t delta_time = samples.back().timestamp_ns - samples.front().timestamp_ns;
    if (delta_time > 0) {
      double value_sec = 1e6 * (total / (static_cast<double>(delta_time) / 1000.0));
      ss << "  ValueRate: " << Repr(metric.unit, value_sec) << " / second\n";
      double count_sec =
          1e6 * (static_cast<double>(samples.size()) / (static_cast<double>(delta_time) / 1000.0));
      ss << "  Rate: " << count_sec << " / second\n";
    }
  }
  std::stable_sort(samples.begin(), samples.end(),
                   [](const MetricSample& a, const MetricSample& b) { return a.value < b.value; });
  ss << "  Percentiles: ";
  for (size_t i = 0; i < kPercentiles.size() && !samples.empty(); ++i) {
    auto index = static_cast<size_t>(kPercentiles[i] * static_cast<double>(samples.size()));
    if (i > 0) ss << "; ";
    ss << (kPercentiles[i] * 100.0) << "%=" << Repr(metric.unit, samples[index].value);
  }
  ss << "\n";
  return ss.str();
}

std::string RenderCounter(const ReportCounter& counter) {
  return "Counter: " + counter.name + "\n  Value: " + std::to_string(counter.value) + "\n";
}

std::string RenderMetricsReport(const std::vector<MetricsArena>& arenas) {
  std::string out;
  for (MetricsArena arena : arenas) {
    std::stable_sort(arena.metrics.begin(), arena.metrics.end(),
                     [](const auto& a, const auto& b) { return a.name < b.name; });
    std::stable_sort(arena.counters.begin(), arena.counters.end(),
                     [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const ReportMetric& m : arena.metrics) {
      if (!m.samples.empty()) out += RenderMetric(m);
    }
    for (const ReportCounter& c : arena.counters) {
      if (c.value > 0) out += RenderCounter(c);
    }
  }
  return out;
}

}  // namespace tpuemu::service
