// bench_replicas: the same load on one tpuemud over SQLite (the baseline), one tpuemud over
// PostgreSQL, and three tpuemud replicas sharing that PostgreSQL (docs/replicas.md), printed side
// by side (issue 19). PostgreSQL is a private server from Debian's binaries
// (tests/support/postgres_server.h) with its durable defaults: every commit flushed. Client k talks
// to replica k mod R, as a round-robin load balancer would. For each setup, fresh processes
// (delays 0) and then:
//   - creates/s: --nodes v4-8 nodes created by --clients concurrent clients (acknowledged), and
//     the time until all are READY (read through every replica);
//   - jobs/s: --jobs 8x8x8 matmul jobs (store-bound: five transactions each) spread over one node
//     per client, submit to terminal;
//   - compute jobs/s: --compute-jobs MLP jobs (engine-bound), the same way;
//   - GET req/s and p50/p99 of one node for --read-seconds.
// Ratios are against SQLite and against one PostgreSQL replica, all measured in this run. Every
// process shares this machine's cores: replicas on one machine add coordination, not CPUs; on
// several machines the engine-bound column is the one that grows.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
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

constexpr char kComputeJob[] =
    R"({"workload": {"mlp": {"layers": 2, "batch": 64, "hidden": 256, "steps": 20}}})";

struct Options {
  int nodes = 600;
  int jobs = 1200;
  int compute_jobs = 120;
  int clients = 6;
  int read_seconds = 4;
};

struct Figures {
  double creates_per_s = 0;
  double ready_seconds = 0;
  double jobs_per_s = 0;
  double compute_jobs_per_s = 0;
  double get_per_s = 0, get_p50_ms = 0, get_p99_ms = 0;
  int errors = 0;
};

// Starts `replicas` tpuemud processes on `store` (replica ids r0, r1, …).
std::vector<std::unique_ptr<DaemonProcess>> StartReplicas(const std::vector<std::string>& store,
                                                          int replicas) {
  std::vector<std::unique_ptr<DaemonProcess>> daemons;
  for (int r = 0; r < replicas; ++r) {
    std::vector<std::string> args = {"--worker-sandboxes",
                                     "off",
                                     "--port",
                                     "0",
                                     "--log-level",
                                     "warn",
                                     "--provisioning-delay-ms",
                                     "0",
                                     "--transition-delay-ms",
                                     "0",
                                     "--replica-id",
                                     "r" + std::to_string(r)};
    args.insert(args.end(), store.begin(), store.end());
    daemons.push_back(std::make_unique<DaemonProcess>());
    if (!daemons.back()->Start(args)) {
      std::fprintf(stderr, "tpuemud replica %d did not start\n", r);
      std::exit(1);
    }
  }
  return daemons;
}

// Submits `count` jobs of `body` from the clients, each on its own node, and waits for them all.
double RunJobs(const std::vector<uint16_t>& ports, int clients, int count, const char* body,
               std::atomic<int>& errors) {
  const double seconds = OnClients(clients, [&](int client) {
    HttpClient c("127.0.0.1", ports[client % ports.size()], std::chrono::seconds(120));
    const std::string jobs = std::string(kNodes) + "/n" + std::to_string(client) + "/jobs";
    std::vector<std::string> names;
    for (int j = client; j < count; j += clients) {
      auto r = c.Request("POST", jobs, body);
      if (!r.ok() || r->status != 200) {
        ++errors;
        continue;
      }
      names.push_back(r->Json()["name"]);
    }
    for (const std::string& name : names) {
      auto w = c.Request("GET", "/v2/" + name + ":wait?timeout=120s");
      if (!w.ok() || w->Json().value("state", "") != "SUCCEEDED") ++errors;
    }
  });
  return count / seconds;
}

Figures Measure(const std::vector<std::string>& store, int replicas, const Options& o) {
  Figures f;
  std::vector<std::unique_ptr<DaemonProcess>> daemons = StartReplicas(store, replicas);
  std::vector<uint16_t> ports;
  for (const auto& d : daemons) ports.push_back(d->port());
  std::atomic<int> errors{0};

  const double create_s = OnClients(o.clients, [&](int client) {
    HttpClient c("127.0.0.1", ports[client % ports.size()], std::chrono::seconds(60));
    for (int i = client; i < o.nodes; i += o.clients) {
      auto r = c.Request("POST", std::string(kNodes) + "?nodeId=n" + std::to_string(i), kNodeBody);
      if (!r.ok() || r->status != 200) ++errors;
    }
  });
  f.creates_per_s = o.nodes / create_s;
  const auto ready_from = Clock::now();
  {
    std::vector<std::unique_ptr<HttpClient>> readers;
    for (uint16_t port : ports) readers.push_back(std::make_unique<HttpClient>("127.0.0.1", port));
    for (int i = 0; i < o.nodes; ++i) {
      while (!NodeReady(*readers[i % readers.size()],
                        std::string(kNodes) + "/" + "n" + std::to_string(i)))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  f.ready_seconds = Seconds(Clock::now() - ready_from);

  f.jobs_per_s = RunJobs(ports, o.clients, o.jobs,
                         R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}})", errors);
  f.compute_jobs_per_s = RunJobs(ports, o.clients, o.compute_jobs, kComputeJob, errors);

  const tpuemu::bench::GetFigures gets =
      tpuemu::bench::MeasureGets([&](int client) { return ports[client % ports.size()]; },
                                 o.clients, o.read_seconds, std::string(kNodes) + "/n0", errors);
  f.get_per_s = gets.per_s;
  f.get_p50_ms = gets.p50_ms;
  f.get_p99_ms = gets.p99_ms;
  f.errors = errors.load();
  for (auto& d : daemons) d->Kill(SIGTERM);
  return f;
}

Options Parse(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_replicas: SQLite, one PostgreSQL replica and three, side by side"};
  app.add_option("--nodes", o.nodes, "v4-8 nodes created")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--jobs", o.jobs, "8x8x8 matmul jobs")
      ->check(CLI::Range(0, 10000000))
      ->capture_default_str();
  app.add_option("--compute-jobs", o.compute_jobs, "MLP jobs (2 layers, hidden 256, 20 steps)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--clients", o.clients, "concurrent HTTP clients (each on its own node)")
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
  if (o.clients > o.nodes) {
    std::fprintf(stderr, "--clients must not exceed --nodes (each client's jobs use its node)\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("CPU: %s (%u hardware threads)\n", tpuemu::bench::CpuModel().c_str(),
              std::thread::hardware_concurrency());
  std::printf("nodes=%d jobs=%d compute-jobs=%d clients=%d read=%ds\n", o.nodes, o.jobs,
              o.compute_jobs, o.clients, o.read_seconds);
  if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return 0;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tpuemu-bench-replicas-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const Figures sqlite = Measure({"--data-dir", dir.string()}, 1, o);
  std::filesystem::remove_all(dir);
  ::setenv("TPUEMU_POSTGRES_DURABLE", "1", 1);
  const Figures pg1 = Measure({"--db", PostgresServer::Shared().CreateDatabase()}, 1, o);
  const Figures pg3 = Measure({"--db", PostgresServer::Shared().CreateDatabase()}, 3, o);

  std::printf("%-30s %11s %11s %11s %10s %10s %10s\n", "", "SQLite", "PG 1 repl", "PG 3 repl",
              "PG1/SQLite", "PG3/SQLite", "PG3/PG1");
  auto row = [](const char* name, double a, double b, double c) {
    std::printf("%-30s %11.2f %11.2f %11.2f %10.2f %10.2f %10.2f\n", name, a, b, c,
                a > 0 ? b / a : 0, a > 0 ? c / a : 0, b > 0 ? c / b : 0);
  };
  row("creates/s (acknowledged)", sqlite.creates_per_s, pg1.creates_per_s, pg3.creates_per_s);
  row("all READY after (s)", sqlite.ready_seconds, pg1.ready_seconds, pg3.ready_seconds);
  row("jobs/s (8x8x8, store-bound)", sqlite.jobs_per_s, pg1.jobs_per_s, pg3.jobs_per_s);
  row("compute jobs/s (MLP)", sqlite.compute_jobs_per_s, pg1.compute_jobs_per_s,
      pg3.compute_jobs_per_s);
  row("GET one node req/s", sqlite.get_per_s, pg1.get_per_s, pg3.get_per_s);
  row("GET p50 (ms)", sqlite.get_p50_ms, pg1.get_p50_ms, pg3.get_p50_ms);
  row("GET p99 (ms)", sqlite.get_p99_ms, pg1.get_p99_ms, pg3.get_p99_ms);
  std::printf("errors: SQLite %d, PostgreSQL 1 replica %d, 3 replicas %d\n", sqlite.errors,
              pg1.errors, pg3.errors);
  return sqlite.errors + pg1.errors + pg3.errors == 0 ? 0 : 2;
}
