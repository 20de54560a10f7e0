// HttpMetrics: request counts and latencies for GET /metrics, fed by the HTTP server's access log
// (one Observe per answered request). Labels are the matched route PATTERN (never the raw path,
// so cardinality stays bounded; "unmatched" when no route matched), the method and, for the
// counter, the status code.
//   tpuemu_http_requests_total{route,method,code}        counter
//   tpuemu_http_request_duration_seconds{route,method}   histogram
// Thread-safe: state guarded by mu_.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "service/observability/prometheus_text.h"

namespace tpuemu::service {

class HttpMetrics {
 public:
  void Observe(std::string_view method, std::string_view route, int status, double latency_seconds);
  void Write(PrometheusText& out) const;

 private:
  mutable std::mutex mu_;
  // std::less<>: Observe looks a request up by views, allocating only for a new series.
  std::map<std::tuple<std::string, std::string, int>, uint64_t, std::less<>>
      requests_;  // guarded by mu_
  std::map<std::tuple<std::string, std::string>, Histogram, std::less<>>
      latency_;  // guarded by mu_
};

}  // namespace tpuemu::service
