// Prometheus text exposition format 0.0.4 (https://prometheus.io/docs/instrumenting/
// exposition_formats): `# HELP` / `# TYPE` per family, then `name{label="value"} number` lines;
// histograms as cumulative `_bucket{le=...}` series ending in le="+Inf", then `_sum` and `_count`.
// Label values are escaped (\\, \", \n). A PrometheusText is a plain builder (not thread-safe);
// Histogram is a value type the owner guards.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tpuemu::service {

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4";

using PromLabels = std::vector<std::pair<std::string, std::string>>;

// Fixed upper bounds (seconds, ascending); counts per bucket, sum and count of observations.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  const std::vector<double>& bounds() const { return bounds_; }
  const std::vector<uint64_t>& counts() const { return counts_; }  // per bucket, not cumulative
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // bounds_.size() + 1 (the last is +Inf)
  double sum_ = 0;
  uint64_t count_ = 0;
};

class PrometheusText {
 public:
  // Starts a metric family; `type` is counter, gauge or histogram.
  void Family(const std::string& name, const std::string& help, const std::string& type);
  void Sample(const std::string& name, const PromLabels& labels, double value);
  // The series of a histogram family named `name`.
  void HistogramSeries(const std::string& name, const PromLabels& labels, const Histogram& h);
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

std::string FormatPromValue(double value);  // "3", "0.25", "+Inf", "NaN"

}  // namespace tpuemu::service
