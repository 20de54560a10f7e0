#include "service/observability/http_metrics.h"

namespace tpuemu::service {
namespace {

// Seconds; from 0.5 ms (an in-memory read) to 60 s (the longest long-poll).
const std::vector<double> kLatencyBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                            0.25,   0.5,   1,      2.5,   5,    10,    30,   60};

}  // namespace

void HttpMetrics::Observe(std::string_view method, std::string_view route, int status,
                          double latency_seconds) {
  const std::string_view r = route.empty() ? std::string_view("unmatched") : route;
  std::lock_guard lock(mu_);
  auto count = requests_.find(RequestsKey(r, method, status));
  if (count == requests_.end()) {
    count = requests_.emplace(std::tuple(std::string(r), std::string(method), status), 0).first;
  }
  ++count->second;
  auto h = latency_.find(LatencyKey(r, method));
  if (h == latency_.end()) {
    h = latency_.emplace(std::tuple(std::string(r), std::string(method)), Histogram(kLatencyBounds))
            .first;
  }
  h->second.Observe(latency_seconds);
}

void HttpMetrics::Write(PrometheusText& out) const {
  std::lock_guard lock(mu_);
  out.Family("tpuemu_http_requests_total", "HTTP requests answered, by route pattern.", "counter");
  for (const auto& [key, count] : requests_) {
    const auto& [route, method, code] = key;
    out.Sample("tpuemu_http_requests_total",
               {{"route", route}, {"method", method}, {"code", std::to_string(code)}},
               static_cast<double>(count));
  }
  out.Family("tpuemu_http_request_duration_seconds",
             "Time from a request fully read to its response handed to the connection.",
             "histogram");
  for (const auto& [key, h] : latency_) {
    out.HistogramSeries("tpuemu_http_request_duration_seconds",
                        {{"route", std::get<0>(key)}, {"method", std::get<1>(key)}}, h);
  }
}

}  // namespace tpuemu::service
