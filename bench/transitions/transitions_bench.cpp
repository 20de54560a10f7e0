// bench_transitions (issue 26 item 5): do node transitions keep their configured delay under write
// load? A fresh tpuemud on a durable SQLite file (--provisioning-delay-ms and
// --transition-delay-ms both --delay-ms) takes a paced, open-loop mix of writes from --clients
// clients: each creates a node, and deletes the one it created --delete-after-ms earlier. Three
// runs, each on its own daemon, side by side: a baseline at --low-rate writes/s, the load at
// --rate writes/s (the issue measured ~700), and --overload-rate writes/s, more than the clients
// get through (they wait for each answer), so the store is the limit. For each: the writes
// acknowledged, those pushed back with 429 RESOURCE_EXHAUSTED (--max-write-lag-ms) and those
// refused with 400 (a delete of a node still CREATING: its transition fell behind), and the
// transition lag of every finished create and delete operation — its endTime - createTime - the
// delay, from the operations the daemon reports — p50, p99 and max, beside the delay.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_model.h"
#include "bench/store_load.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"

namespace {

using tpuemu::bench::OnClients;
using tpuemu::testing::DaemonProcess;
using tpuemu::testing::HttpClient;
using Clock = tpuemu::bench::LoadClock;
using nlohmann::json;

constexpr char kZone[] = "/v2/projects/bench/locations/us-central2-b";
constexpr char kNodeBody[] = R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";

struct Options {
  double rate = 700;
  double low_rate = 50;
  double overload_rate = 6000;
  int seconds = 10;
  int clients = 8;
  int delay_ms = 0;
  int delete_after_ms = 500;
  int max_write_lag_ms = 50;
};

struct Figures {
  double writes_per_s = 0;  // acknowledged
  int acked = 0, pushed_back = 0, refused = 0, failed = 0;
  int64_t operations = 0;
  double lag_p50_ms = 0, lag_p99_ms = 0, lag_max_ms = 0;
};

int64_t UnixMs(const std::string& rfc3339) {
  // "2026-11-27T21:15:14.265155Z": seconds via timegm, then the fraction's milliseconds.
  std::tm tm{};
  if (strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  const std::size_t dot = rfc3339.find('.');
  if (dot != std::string::npos) ms += std::atoi(rfc3339.substr(dot + 1, 3).c_str());
  return ms;
}

Figures Measure(const Options& o, double rate) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tpuemu-bench-transitions-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  DaemonProcess daemon;
  if (!daemon.Start({"--port", "0", "--log-level", "warn", "--data-dir", dir.string(),
                     "--provisioning-delay-ms", std::to_string(o.delay_ms), "--transition-delay-ms",
                     std::to_string(o.delay_ms), "--max-write-lag-ms",
                     std::to_string(o.max_write_lag_ms)})) {
    std::fprintf(stderr, "tpuemud did not start\n");
    std::exit(1);
  }
  const uint16_t port = daemon.port();
  Figures f;
  std::atomic<int> acked{0}, pushed_back{0}, refused{0}, failed{0};
  const auto interval = std::chrono::duration<double>(o.clients / rate);
  const int per_client = static_cast<int>(rate * o.seconds / o.clients);
  const int delete_lag =
      std::max(1, static_cast<int>(o.delete_after_ms / 1000.0 * rate / o.clients));
  const double elapsed = OnClients(o.clients, [&](int client) {
    HttpClient c("127.0.0.1", port, std::chrono::seconds(30));
    std::vector<std::string> created;
    const auto start = Clock::now();
    int created_count = 0;
    for (int i = 0; i < per_client; ++i) {
      // Open loop: request i goes out at its slot, however long the earlier ones took.
      std::this_thread::sleep_until(start +
                                    std::chrono::duration_cast<Clock::duration>(interval * i));
      std::string method = "POST", target;
      const bool do_delete = i % 2 == 1 && created.size() > static_cast<std::size_t>(delete_lag);
      if (do_delete) {
        method = "DELETE";
        target = std::string(kZone) + "/nodes/" + created.front();
      } else {
        const std::string id = "c" + std::to_string(client) + "-" + std::to_string(created_count++);
        target = std::string(kZone) + "/nodes?nodeId=" + id;
        created.push_back(id);
      }
      auto r = c.Request(method, target, do_delete ? "" : kNodeBody);
      if (!r.ok() || r->status >= 500) {
        ++failed;
      } else if (r->status == 200) {
        ++acked;
      } else if (r->status == 429) {
        ++pushed_back;
      } else {
        ++refused;
      }
      if (do_delete) {
        created.erase(created.begin());
      } else if (!r.ok() || r->status != 200) {
        created.pop_back();
      }
    }
  });
  f.acked = acked;
  f.pushed_back = pushed_back;
  f.refused = refused;
  f.failed = failed;
  f.writes_per_s = acked / elapsed;
  // Let the last transitions finish, then read every operation's times.
  HttpClient c("127.0.0.1", port, std::chrono::seconds(60));
  std::vector<double> lags;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    lags.clear();
    bool pending = false;
    std::string token;
    do {
      auto r = c.Request("GET", std::string(kZone) + "/operations?pageSize=1000" +
                                    (token.empty() ? "" : "&pageToken=" + token));
      if (!r.ok() || r->status != 200) break;
      const json page = r->Json();
      for (const json& op : page.value("operations", json::array())) {
        if (!op.value("done", false)) {
          pending = true;
          continue;
        }
        const json& m = op["metadata"];
        const int64_t lag =
            UnixMs(m.value("endTime", "")) - UnixMs(m.value("createTime", "")) - o.delay_ms;
        lags.push_back(static_cast<double>(lag));
      }
      token = page.value("nextPageToken", "");
    } while (!token.empty());
    if (!pending || Clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::sort(lags.begin(), lags.end());
  f.operations = static_cast<int64_t>(lags.size());
  if (!lags.empty()) {
    f.lag_p50_ms = lags[lags.size() / 2];
    f.lag_p99_ms = lags[(lags.size() - 1) * 99 / 100];
    f.lag_max_ms = lags.back();
  }
  daemon.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
  return f;
}

Options Parse(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_transitions: node transition lag at a low and a high write rate"};
  app.add_option("--rate", o.rate, "offered writes/s of the loaded run")->capture_default_str();
  app.add_option("--low-rate", o.low_rate, "offered writes/s of the baseline")
      ->capture_default_str();
  app.add_option("--overload-rate", o.overload_rate,
                 "offered writes/s of the third run, past what the store sustains (0 = skip)")
      ->capture_default_str();
  app.add_option("--seconds", o.seconds, "length of each run")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--clients", o.clients, "concurrent HTTP clients")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--delay-ms", o.delay_ms, "provisioning and transition delay")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--delete-after-ms", o.delete_after_ms, "a node is deleted this long after")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--max-write-lag-ms", o.max_write_lag_ms, "tpuemud's --max-write-lag-ms")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("CPU: %s (%u hardware threads)\n", tpuemu::bench::CpuModel().c_str(),
              std::thread::hardware_concurrency());
  std::printf(
      "delay=%d ms, %d clients, %d s per run, delete %d ms after create, "
      "--max-write-lag-ms %d\n",
      o.delay_ms, o.clients, o.seconds, o.delete_after_ms, o.max_write_lag_ms);
  const Figures low = Measure(o, o.low_rate);
  const Figures high = Measure(o, o.rate);
  const Figures over = o.overload_rate > 0 ? Measure(o, o.overload_rate) : Figures{};
  std::printf("%-34s %12s %12s %12s\n", "", "baseline", "loaded", "overload");
  auto row = [](const char* name, double a, double b, double c, const char* format) {
    std::printf("%-34s ", name);
    std::printf(format, a);
    std::printf(" ");
    std::printf(format, b);
    std::printf(" ");
    std::printf(format, c);
    std::printf("\n");
  };
  row("offered writes/s", o.low_rate, o.rate, o.overload_rate, "%12.0f");
  row("acknowledged writes/s", low.writes_per_s, high.writes_per_s, over.writes_per_s, "%12.1f");
  row("pushed back (429 + RetryInfo)", low.pushed_back, high.pushed_back, over.pushed_back,
      "%12.0f");
  row("refused (400, e.g. still CREATING)", low.refused, high.refused, over.refused, "%12.0f");
  row("failed (5xx, no answer)", low.failed, high.failed, over.failed, "%12.0f");
  row("operations finished", static_cast<double>(low.operations),
      static_cast<double>(high.operations), static_cast<double>(over.operations), "%12.0f");
  row("configured delay (ms)", o.delay_ms, o.delay_ms, o.delay_ms, "%12.0f");
  row("transition lag p50 (ms)", low.lag_p50_ms, high.lag_p50_ms, over.lag_p50_ms, "%12.0f");
  row("transition lag p99 (ms)", low.lag_p99_ms, high.lag_p99_ms, over.lag_p99_ms, "%12.0f");
  row("transition lag max (ms)", low.lag_max_ms, high.lag_max_ms, over.lag_max_ms, "%12.0f");
  std::printf("target: p99 lag <= 100 ms at %.0f writes/s: %s; under overload: %s\n", o.rate,
              high.lag_p99_ms <= 100 ? "PASS" : "MISS",
              o.overload_rate <= 0     ? "skipped"
              : over.lag_p99_ms <= 100 ? "PASS"
                                       : "MISS");
  return low.failed + high.failed + over.failed == 0 ? 0 : 2;
}
