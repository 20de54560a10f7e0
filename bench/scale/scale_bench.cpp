// bench_scale: a store of N nodes and M tiny jobs behind a real tpuemud (issue 17). Starts
// tpuemud on a durable SQLite file in a fresh temp dir (delays 0, sampler every
// --sample-interval-ms), creates one node in project "solo" (the baseline), then N v4-8 nodes in
// project "big" and M 8x8x8 matmul jobs spread over the first --job-nodes of them, and prints:
//   - creates/s and jobs/s while growing (jobs/s: first submit to the last job terminal);
//   - GET one node of "big" (a random one each time) against GET the "solo" node: req/s, p50, p99
//     and the ratio, measured in alternating slices while the sampler runs;
//   - a page of 1,000 nodes at the start, middle and end of "big", and the page of "solo";
//   - store size (pages in use, from a read-only SQLite connection) per node and per job;
//   - store growth while idle over --idle-seconds with the sampler running at
//     --sample-interval-ms, extrapolated to an hour at the default 10 s interval;
//   - tpuemud's RSS, and the time from exec to /readyz after a kill -9.
// Usage: bench_scale [--nodes N=100000] [--jobs M=1000000] [--clients C=4] [--job-nodes K=64]
//                    [--read-seconds S=6] [--idle-seconds I=20] [--sample-interval-ms T=200]
// Jobs go through the engine one by one per node; at M much above 100,000 on 2 cores this takes
// a long time: run fewer and scale the per-job figures (bench/README.md).
#include <sqlite3.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_model.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"

namespace {

using tpuemu::testing::DaemonProcess;
using tpuemu::testing::HttpClient;
using Clock = std::chrono::steady_clock;

constexpr char kZone[] = "us-central2-b";
constexpr int64_t kDefaultSampleIntervalMs = 10000;  // tpuemud's --utilization-interval-ms

struct Options {
  int nodes = 100000;
  int jobs = 1000000;
  int clients = 4;
  int job_nodes = 64;
  int read_seconds = 6;
  int idle_seconds = 20;
  int sample_interval_ms = 200;
};

// Exits with CLI11's message on --help or a bad flag.
Options Parse(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_scale: a store of N nodes and M tiny jobs behind a real tpuemud"};
  app.add_option("--nodes", o.nodes, "v4-8 nodes created in project big")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app.add_option("--jobs", o.jobs, "8x8x8 matmul jobs")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();
  app.add_option("--clients", o.clients, "concurrent HTTP clients")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--job-nodes", o.job_nodes, "the jobs go round-robin to this many nodes")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app.add_option("--read-seconds", o.read_seconds, "GET measurement, in four alternating slices")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--idle-seconds", o.idle_seconds, "idle growth measurement")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--sample-interval-ms", o.sample_interval_ms,
                 "tpuemud's utilization sampler interval")
      ->check(CLI::Range(10, 3600000))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  o.job_nodes = std::min(o.job_nodes, o.nodes);
  return o;
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Parent(const std::string& project) {
  return std::string("/v2/projects/") + project + "/locations/" + kZone;
}

struct Latencies {
  std::vector<double> ms;
  double seconds = 0;
  int errors = 0;
  double Pct(double p) {
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    return ms[static_cast<size_t>(p * static_cast<double>(ms.size() - 1))];
  }
  double Rate() const { return seconds > 0 ? static_cast<double>(ms.size()) / seconds : 0; }
};

// `clients` threads send target(thread, i) for `seconds`; latencies of the 200 replies.
Latencies Load(uint16_t port, int clients, double seconds,
               const std::function<std::string(int, int)>& target) {
  std::vector<Latencies> per(static_cast<size_t>(clients));
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  const auto until =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      HttpClient client("127.0.0.1", port, std::chrono::seconds(60));
      Latencies& mine = per[static_cast<size_t>(c)];
      for (int i = 0; Clock::now() < until; ++i) {
        const auto s = Clock::now();
        auto r = client.Request("GET", target(c, i));
        if (!r.ok() || r->status != 200) {
          ++mine.errors;
          continue;
        }
        mine.ms.push_back(Ms(Clock::now() - s));
      }
    });
  }
  for (auto& t : threads) t.join();
  Latencies all;
  all.seconds = Seconds(Clock::now() - t0);
  for (Latencies& l : per) {
    all.ms.insert(all.ms.end(), l.ms.begin(), l.ms.end());
    all.errors += l.errors;
  }
  return all;
}

// One integer from the store, read beside tpuemud on a read-only connection; -1 on failure.
int64_t QueryInt(const std::string& db_path, const char* sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

// Bytes of the store's pages in use (page_count - freelist_count).
int64_t StoreBytes(const std::string& db_path) {
  return QueryInt(db_path,
                  "SELECT ((SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count "
                  "FROM pragma_freelist_count())) * (SELECT page_size FROM pragma_page_size())");
}

// Terminal jobs, from the counter table tpuemud keeps.
int64_t TerminalJobs(const std::string& db_path) {
  return QueryInt(db_path,
                  "SELECT COALESCE(SUM(n), 0) FROM job_state_counts WHERE state NOT IN "
                  "('QUEUED', 'RUNNING')");
}

// READY nodes, from the counter table tpuemud keeps.
int64_t ReadyNodes(const std::string& db_path) {
  return QueryInt(db_path,
                  "SELECT COALESCE(SUM(n), 0) FROM node_state_counts WHERE state = 'READY'");
}

int64_t RssKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      int64_t kb = 0;
      status >> kb;
      return kb;
    }
  }
  return -1;
}

// `total` POSTs from `clients` threads; body(i) and target(i) for the i-th; returns seconds.
double Post(uint16_t port, int clients, int total, const std::function<std::string(int)>& target,
            const std::string& body, std::atomic<int>& failures) {
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      HttpClient client("127.0.0.1", port, std::chrono::seconds(60));
      for (int i = next++; i < total; i = next++) {
        auto r = client.Request("POST", target(i), body);
        if (!r.ok() || r->status != 200) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  return Seconds(Clock::now() - t0);
}

void PrintLatency(const char* what, Latencies& l) {
  std::printf("  %-34s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%zu ok, %d errors)\n", what,
              l.Rate(), l.Pct(0.50), l.Pct(0.99), l.ms.size(), l.errors);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows when piped to a file
  const Options o = Parse(argc, argv);
  const std::string dir = "/tmp/tpuemu-bench-scale-" + std::to_string(::getpid());
  const std::string db_path = dir + "/tpuemu.db";
  const std::vector<std::string> args = {"--worker-sandboxes",
                                         "off",
                                         "--port",
                                         "0",
                                         "--log-level",
                                         "warn",
                                         "--provisioning-delay-ms",
                                         "0",
                                         "--transition-delay-ms",
                                         "0",
                                         "--zone-capacity-tensorcores",
                                         "2000000000",
                                         "--utilization-interval-ms",
                                         std::to_string(o.sample_interval_ms),
                                         "--data-dir",
                                         dir};
  DaemonProcess daemon;
  if (!daemon.Start(args)) {
    std::fprintf(stderr, "tpuemud did not start\n");
    return 1;
  }
  std::printf("CPU: %s\n", tpuemu::bench::CpuModel().c_str());
  std::printf("nodes=%d jobs=%d clients=%d job-nodes=%d sampler every %d ms\n", o.nodes, o.jobs,
              o.clients, o.job_nodes, o.sample_interval_ms);
  const std::string node_body =
      R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";
  std::atomic<int> failures{0};
  Post(
      daemon.port(), 1, 1, [](int) { return Parent("solo") + "/nodes?nodeId=solo"; }, node_body,
      failures);
  const int64_t empty_bytes = StoreBytes(db_path);

  // Growing: nodes, then jobs.
  const double create_s = Post(
      daemon.port(), o.clients, o.nodes,
      [](int i) { return Parent("big") + "/nodes?nodeId=n" + std::to_string(i); }, node_body,
      failures);
  std::printf("creates: %d nodes in %.1f s = %.0f creates/s (%d failed)\n", o.nodes, create_s,
              o.nodes / create_s, failures.load());
  // Each create returned a pending Operation; the nodes turn READY as tpuemud's scheduler completes
  // them. Everything below measures the settled store.
  const auto settle_t0 = Clock::now();
  while (ReadyNodes(db_path) < o.nodes + 1 - failures.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("  all READY %.1f s after the last create returned\n",
              Seconds(Clock::now() - settle_t0));
  const int64_t nodes_bytes = StoreBytes(db_path);
  const auto jobs_t0 = Clock::now();
  const double submit_s = Post(
      daemon.port(), o.clients, o.jobs,
      [&](int i) { return Parent("big") + "/nodes/n" + std::to_string(i % o.job_nodes) + "/jobs"; },
      R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}})", failures);
  while (TerminalJobs(db_path) < o.jobs - failures.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const double jobs_s = Seconds(Clock::now() - jobs_t0);
  const int64_t jobs_bytes = StoreBytes(db_path);
  std::printf(
      "jobs: %d submitted in %.1f s (%.0f/s), all terminal after %.1f s = %.0f jobs/s "
      "(%d requests failed in all)\n",
      o.jobs, submit_s, o.jobs / submit_s, jobs_s, o.jobs / jobs_s, failures.load());
  std::printf("RSS after growing: %lld kB\n", static_cast<long long>(RssKb(daemon.pid())));

  // Reads while the sampler runs: alternating slices of "big" and "solo".
  std::printf("reads (%d clients, sampler every %d ms over %d nodes):\n", o.clients,
              o.sample_interval_ms, o.nodes + 1);
  Latencies big, solo;
  std::mt19937 rng(17);
  std::vector<std::string> targets;
  for (int i = 0; i < 4096; ++i) {
    targets.push_back(Parent("big") + "/nodes/n" +
                      std::to_string(std::uniform_int_distribution<int>(0, o.nodes - 1)(rng)));
  }
  // The first GET of a node reads the store; later ones are served from tpuemud's node cache until
  // a write touches that node. The cold pass is printed on its own; the slices compare warm reads,
  // as a client polling its nodes sees them (the "solo" node is warm after its first GET too).
  Latencies cold;
  {
    HttpClient client("127.0.0.1", daemon.port(), std::chrono::seconds(60));
    const auto t0 = Clock::now();
    for (const std::string& target : targets) {
      const auto s = Clock::now();
      auto r = client.Request("GET", target);
      if (!r.ok() || r->status != 200) {
        ++cold.errors;
        continue;
      }
      cold.ms.push_back(Ms(Clock::now() - s));
    }
    cold.seconds = Seconds(Clock::now() - t0);
  }
  PrintLatency("first GET of 4,096 nodes (1 client)", cold);
  const double slice = std::max(1.0, o.read_seconds / 4.0);
  for (int round = 0; round < 2; ++round) {
    for (Latencies* into : {&solo, &big}) {
      Latencies l = Load(daemon.port(), o.clients, slice, [&](int c, int i) {
        return into == &solo ? Parent("solo") + "/nodes/solo"
                             : targets[static_cast<size_t>(c * 1024 + i) % targets.size()];
      });
      into->ms.insert(into->ms.end(), l.ms.begin(), l.ms.end());
      into->seconds += l.seconds;
      into->errors += l.errors;
    }
  }
  PrintLatency("GET node, one-node project", solo);
  PrintLatency(("GET node, " + std::to_string(o.nodes) + "-node project").c_str(), big);
  std::printf("  ratio big/solo GET req/s = %.2f (target >= 0.90: %s)\n", big.Rate() / solo.Rate(),
              big.Rate() >= 0.9 * solo.Rate() ? "PASS" : "MISS");

  // Pages of 1,000: the tokens of every page first, then the first, middle and last again.
  std::vector<std::string> tokens = {""};
  {
    HttpClient c("127.0.0.1", daemon.port(), std::chrono::seconds(60));
    for (;;) {
      auto r = c.Request("GET", Parent("big") + "/nodes?pageSize=1000&pageToken=" + tokens.back());
      if (!r.ok() || r->status != 200) break;
      const std::string next = r->Json().value("nextPageToken", "");
      if (next.empty()) break;
      tokens.push_back(next);
    }
  }
  std::printf("list pages of 1,000 (%zu pages):\n", tokens.size());
  const double page_s = std::max(1.0, o.read_seconds / 4.0);
  const std::vector<std::pair<const char*, std::string>> pages = {
      {"first page", tokens.front()},
      {"middle page", tokens[tokens.size() / 2]},
      {"last page", tokens.back()}};
  for (const auto& page : pages) {
    const std::string& token = page.second;
    Latencies l = Load(daemon.port(), 1, page_s, [&](int, int) {
      return Parent("big") + "/nodes?pageSize=1000&pageToken=" + token;
    });
    PrintLatency(page.first, l);
  }
  Latencies solo_list = Load(daemon.port(), 1, page_s,
                             [&](int, int) { return Parent("solo") + "/nodes?pageSize=1000"; });
  PrintLatency("page of the one-node project", solo_list);

  // Store size, idle growth.
  std::printf("store: %.0f bytes per node, %.0f bytes per job (%.1f MB in all)\n",
              static_cast<double>(nodes_bytes - empty_bytes) / o.nodes,
              static_cast<double>(jobs_bytes - nodes_bytes) / std::max(1, o.jobs),
              static_cast<double>(jobs_bytes) / 1e6);
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * o.sample_interval_ms));
  const int64_t idle_start = StoreBytes(db_path);
  std::this_thread::sleep_for(std::chrono::seconds(o.idle_seconds));
  const int64_t idle_end = StoreBytes(db_path);
  const double passes = o.idle_seconds * 1000.0 / o.sample_interval_ms;
  const double per_hour = static_cast<double>(idle_end - idle_start) / passes *
                          (3600.0 * 1000 / kDefaultSampleIntervalMs);
  std::printf(
      "idle %d s, ~%.0f sampler passes over %d nodes: store grew %lld bytes -> %.3f MB "
      "per idle hour at the default 10 s interval (target < 1 MB: %s)\n",
      o.idle_seconds, passes, o.nodes + 1, static_cast<long long>(idle_end - idle_start),
      per_hour / 1e6, per_hour < 1e6 ? "PASS" : "MISS");
  std::printf("RSS idle: %lld kB\n", static_cast<long long>(RssKb(daemon.pid())));

  // Restart after kill -9: exec to the ready line (printed once /readyz is 200).
  daemon.Kill(SIGKILL);
  const auto restart_t0 = Clock::now();
  if (!daemon.Start(args)) {
    std::fprintf(stderr, "tpuemud did not restart\n");
    return 1;
  }
  const double restart_s = Seconds(Clock::now() - restart_t0);
  std::printf("restart after kill -9 to /readyz: %.2f s (target < 2 s: %s); RSS %lld kB\n",
              restart_s, restart_s < 2 ? "PASS" : "MISS",
              static_cast<long long>(RssKb(daemon.pid())));
  daemon.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
  return failures.load() == 0 ? 0 : 2;
}
