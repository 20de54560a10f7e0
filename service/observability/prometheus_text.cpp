#include "service/observability/prometheus_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tpuemu::service {
namespace {

std::string EscapeLabel(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderLabels(const PromLabels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ",";
    out += labels[i].first + "=\"" + EscapeLabel(labels[i].second) + "\"";
  }
  return out + "}";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);  // le: value <= bound
  ++counts_[static_cast<size_t>(it - bounds_.begin())];
  sum_ += value;
  ++count_;
}

std::string FormatPromValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return buf;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

void PrometheusText::Family(const std::string& name, const std::string& help,
                            const std::string& type) {
  out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void PrometheusText::Sample(const std::string& name, const PromLabels& labels, double value) {
  out_ += name + RenderLabels(labels) + " " + FormatPromValue(value) + "\n";
}

void PrometheusText::HistogramSeries(const std::string& name, const PromLabels& labels,
                                     const Histogram& h) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= h.bounds().size(); ++i) {
    cumulative += h.counts()[i];
    PromLabels with_le = labels;
    with_le.emplace_back("le", i < h.bounds().size() ? FormatPromValue(h.bounds()[i]) : "+Inf");
    Sample(name + "_bucket", with_le, static_cast<double>(cumulative));
  }
  Sample(name + "_sum", labels, h.sum());
  Sample(name + "_count", labels, static_cast<double>(h.count()));
}

}  // namespace tpuemu::service
