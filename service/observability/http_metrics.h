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
  // Orders a series' key and the views Observe looks it up by (allocating only for a new series)
  // as the same tuple of views; clang 14 compares no tuples of mixed types.
  template <class... Views>
  struct ViewLess {
    using is_transparent = void;
    template <class Key>
    static std::tuple<Views...> AsViews(const Key& key) {
      return std::apply([](const auto&... field) { return std::tuple<Views...>(field...); }, key);
    }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return AsViews(a) < AsViews(b);
    }
  };
  using RequestsKey = std::tuple<std::string_view, std::string_view, int>;  // route, method, code
  using LatencyKey = std::tuple<std::string_view, std::string_view>;        // route, method

  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t,
           ViewLess<std::string_view, std::string_view, int>>
      requests_;  // guarded by mu_
  std::map<std::tuple<std::string, std::string>, Histogram,
           ViewLess<std::string_view, std::string_view>>
      latency_;  // guarded by mu_
};

}  // namespace tpuemu::service
