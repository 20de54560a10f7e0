// bench_stores: the same load on tpuemud over each store, printed side by side (issue 19):
// SQLite (a durable file in a fresh temp dir, the default) and PostgreSQL (a private server from
// Debian's binaries, tests/support/postgres_server.h, with PostgreSQL's durable defaults: every
// commit flushed), and PostgreSQL with synchronous_commit=off for tpuemud's session ("PG async").
// For each store, a fresh tpuemud (delays 0) and then:
//   - creates/s: --nodes v4-8 nodes created by --clients concurrent clients (acknowledged), and
//     the time until all are READY;
//   - jobs/s: --jobs 8x8x8 matmul jobs spread over one node per client, submit to terminal;
//   - GET req/s and p50/p99 of one node for --read-seconds.
// Ratios are PostgreSQL / SQLite, both measured in this run. PostgreSQL shares the two cores with
// tpuemud and the clients, as it would on one machine.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_model.h"
#include "bench/store_load.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_server.h"

namespace {

using tpuemu::bench::NodeReady;
using tpuemu::bench::OnClients;
using tpuemu::bench::Seconds;
using tpuemu::testing::DaemonProcess;
using tpuemu::testing::HttpClient;
using tpuemu::testing::PostgresServer;
using Clock = tpuemu::bench::LoadClock;

constexpr char kNodes[] = "/v2/projects/bench/locations/us-central2-b/nodes";
constexpr char kNodeBody[] = R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";

struct Options {
  int nodes = 2000;
  int jobs = 2000;
  int clients = 4;
  int read_seconds = 4;
};

struct Figures {
  double creates_per_s = 0;
  double ready_seconds = 0;
  double jobs_per_s = 0;
  double get_per_s = 0, get_p50_ms = 0, get_p99_ms = 0;
  int errors = 0;
};

Figures Measure(const std::vector<std::string>& store, const Options& o) {
  Figures f;
  DaemonProcess daemon;
  std::vector<std::string> args = {"--port",
                                   "0",
                                   "--log-level",
                                   "warn",
                                   "--provisioning-delay-ms",
                                   "0",
                                   "--transition-delay-ms",
                                   "0",
                                   "--worker-sandboxes",
                                   "off"};
  args.insert(args.end(), store.begin(), store.end());
  if (!daemon.Start(args)) {
    std::fprintf(stderr, "tpuemud did not start\n");
    std::exit(1);
  }
  const uint16_t port = daemon.port();
  std::atomic<int> errors{0};

  const double create_s = OnClients(o.clients, [&](int client) {
    HttpClient c("127.0.0.1", port, std::chrono::seconds(60));
    for (int i = client; i < o.nodes; i += o.clients) {
      auto r = c.Request("POST", std::string(kNodes) + "?nodeId=n" + std::to_string(i), kNodeBody);
      if (!r.ok() || r->status != 200) ++errors;
    }
  });
  f.creates_per_s = o.nodes / create_s;
  const auto ready_from = Clock::now();
  {
    HttpClient c("127.0.0.1", port);
    for (int i = 0; i < o.nodes; ++i) {
      while (!NodeReady(c, std::string(kNodes) + "/n" + std::to_string(i)))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  f.ready_seconds = Seconds(Clock::now() - ready_from);

  const double jobs_s = OnClients(o.clients, [&](int client) {
    HttpClient c("127.0.0.1", port, std::chrono::seconds(60));
    const std::string jobs =
        std::string(kNodes) + "/n" + std::to_string(client % o.nodes) + "/jobs";
    std::vector<std::string> names;
    for (int j = client; j < o.jobs; j += o.clients) {
      auto r = c.Request("POST", jobs, R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}})");
      if (!r.ok() || r->status != 200) {
        ++errors;
        continue;
      }
      names.push_back(r->Json()["name"]);
    }
    for (const std::string& name : names) {
      auto w = c.Request("GET", "/v2/" + name + ":wait?timeout=60s");
      if (!w.ok() || w->Json().value("state", "") != "SUCCEEDED") ++errors;
    }
  });
  f.jobs_per_s = o.jobs / jobs_s;

  const tpuemu::bench::GetFigures gets = tpuemu::bench::MeasureGets(
      [&](int) { return port; }, o.clients, o.read_seconds, std::string(kNodes) + "/n0", errors);
  f.get_per_s = gets.per_s;
  f.get_p50_ms = gets.p50_ms;
  f.get_p99_ms = gets.p99_ms;
  f.errors = errors.load();
  daemon.Kill(SIGTERM);
  return f;
}

Options Parse(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_stores: tpuemud on SQLite and on PostgreSQL, side by side"};
  app.add_option("--nodes", o.nodes, "v4-8 nodes created")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--jobs", o.jobs, "8x8x8 matmul jobs")
      ->check(CLI::Range(0, 10000000))
      ->capture_default_str();
  app.add_option("--clients", o.clients, "concurrent HTTP clients")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--read-seconds", o.read_seconds, "GET measurement")
      ->check(CLI::Range(1, 3600))
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
  std::printf("CPU: %s\n", tpuemu::bench::CpuModel().c_str());
  std::printf("nodes=%d jobs=%d clients=%d read=%ds\n", o.nodes, o.jobs, o.clients, o.read_seconds);
  if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return 0;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tpuemu-bench-stores-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const Figures sqlite = Measure({"--data-dir", dir.string()}, o);
  std::filesystem::remove_all(dir);
  ::setenv("TPUEMU_POSTGRES_DURABLE", "1", 1);
  const Figures pg = Measure({"--db", PostgresServer::Shared().CreateDatabase()}, o);
  // libpq's options parameter: this session's commits return before the WAL is flushed, the
  // guarantee SQLite's synchronous=NORMAL gives (a kill -9 of tpuemud loses nothing).
  const Figures pg_async = Measure({"--db", PostgresServer::Shared().CreateDatabase() +
                                                "?options=-c%20synchronous_commit%3Doff"},
                                   o);

  std::printf("%-28s %12s %12s %12s %12s %12s\n", "", "SQLite file", "PostgreSQL", "PG async",
              "PG/SQLite", "async/SQLite");
  auto row = [](const char* name, double a, double b, double c) {
    std::printf("%-28s %12.2f %12.2f %12.2f %12.2f %12.2f\n", name, a, b, c, a > 0 ? b / a : 0,
                a > 0 ? c / a : 0);
  };
  row("creates/s (acknowledged)", sqlite.creates_per_s, pg.creates_per_s, pg_async.creates_per_s);
  row("all READY after (s)", sqlite.ready_seconds, pg.ready_seconds, pg_async.ready_seconds);
  row("jobs/s (submit -> terminal)", sqlite.jobs_per_s, pg.jobs_per_s, pg_async.jobs_per_s);
  row("GET one node req/s", sqlite.get_per_s, pg.get_per_s, pg_async.get_per_s);
  row("GET p50 (ms)", sqlite.get_p50_ms, pg.get_p50_ms, pg_async.get_p50_ms);
  row("GET p99 (ms)", sqlite.get_p99_ms, pg.get_p99_ms, pg_async.get_p99_ms);
  std::printf("errors: SQLite %d, PostgreSQL %d, PostgreSQL async %d\n", sqlite.errors, pg.errors,
              pg_async.errors);
  return sqlite.errors + pg.errors + pg_async.errors == 0 ? 0 : 2;
}
