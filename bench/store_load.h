// The HTTP load bench_stores and bench_replicas put on tpuemud: concurrent clients, READY polling
// and the GET latency run, shared so the two benchmarks measure the same way. Header-only (the
// benchmarks link only the test HTTP client).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/http_client.h"

namespace tpuemu::bench {

using LoadClock = std::chrono::steady_clock;

inline double Seconds(LoadClock::duration d) { return std::chrono::duration<double>(d).count(); }

// Runs `work(client)` on `clients` threads at once; the wall time in seconds.
inline double OnClients(int clients, const std::function<void(int)>& work) {
  const auto start = LoadClock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) threads.emplace_back(work, i);
  for (std::thread& t : threads) t.join();
  return Seconds(LoadClock::now() - start);
}

inline bool NodeReady(testing::HttpClient& c, const std::string& node_path) {
  auto r = c.Request("GET", node_path);
  return r.ok() && r->status == 200 && r->Json().value("state", "") == "READY";
}

struct GetFigures {
  double per_s = 0, p50_ms = 0, p99_ms = 0;
};

// GETs of `path` by `clients` concurrent clients for `seconds`, client k on port_of(k); failures
// count into `errors`.
inline GetFigures MeasureGets(const std::function<uint16_t(int)>& port_of, int clients, int seconds,
                              const std::string& path, std::atomic<int>& errors) {
  std::vector<std::vector<double>> latencies(clients);
  const auto until = LoadClock::now() + std::chrono::seconds(seconds);
  const double elapsed = OnClients(clients, [&](int client) {
    testing::HttpClient c("127.0.0.1", port_of(client));
    while (LoadClock::now() < until) {
      const auto s = LoadClock::now();
      auto r = c.Request("GET", path);
      if (!r.ok() || r->status != 200) ++errors;
      latencies[client].push_back(
          std::chrono::duration<double, std::milli>(LoadClock::now() - s).count());
    }
  });
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  GetFigures f;
  f.per_s = all.size() / elapsed;
  f.p50_ms = all.empty() ? 0 : all[all.size() / 2];
  f.p99_ms = all.empty() ? 0 : all[(all.size() - 1) * 99 / 100];
  return f;
}

}  // namespace tpuemu::bench
