// bench_worker_capacity: creates up to this host's worker budget stay as fast as records
// (service/workers/host_capacity.h). Starts a real tpuemud as root with --worker-sandboxes auto
// and --worker-max --budget (delays 0, a temp --data-dir), and times, from --clients clients:
//  (1) --budget v4-8 creates (one worker each): every one accepted and sandboxed; creates/s;
//  (2) --over more creates past the budget: every one refused at once with the zone's stockout
//      (RESOURCE_EXHAUSTED, code 8); refusals/s;
// then the same --budget creates on a second tpuemud with --worker-sandboxes off (records), in the
// same run; prints the ratio sandboxed/records and the CPU model. The boots that the creates start
// run meanwhile (that is the cost being measured). Every node is deleted at the end and no
// tpuemu-sandbox process of the run may be left. Skips (exit 0) when not root or when the first
// node says workerSandbox.enabled=false (with the reason). Exit 2 when a check failed, 1 on a
// setup failure. Every wait has a deadline; the temp dir is removed at the end.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/cpu_model.h"
#include "bench/store_load.h"
#include "bench/workers/bench_report.h"
#include "bench/workers/node_api.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"

namespace {

using tpuemu::bench::Check;
using tpuemu::bench::NodeApi;
using tpuemu::testing::DaemonProcess;
using tpuemu::testing::HttpClient;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

struct Flags {
  int budget = 32;  // --worker-max: v4-8 nodes (one worker each) created up to it
  int over = 200;   // creates past it
  int clients = 4;  // concurrent HTTP clients
  int timeout_s = 120;
};

Flags Parse(int argc, char** argv) {
  Flags f;
  CLI::App app{"bench_worker_capacity: creates up to the host's worker budget against records"};
  app.add_option("--budget", f.budget, "--worker-max of the sandboxed tpuemud (v4-8 creates)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--over", f.over, "creates past the budget (each refused at once)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--clients", f.clients, "concurrent clients")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--timeout-s", f.timeout_s, "longest wait for every node READY, or GONE")
      ->check(CLI::Range(10, 3600))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return f;
}

constexpr char kNodes[] = "/v2/projects/bench/locations/us-central2-b/nodes";

struct Creates {
  double seconds = 0;
  int accepted = 0;   // the Operation has no error
  int stockouts = 0;  // the Operation failed with code 8, the zone's stockout text
  int other = 0;      // anything else
};

// `count` v4-8 creates named prefix0.. from `clients` clients at once.
Creates CreateMany(uint16_t port, int clients, const std::string& prefix, int count) {
  std::atomic<int> accepted{0}, stockouts{0}, other{0};
  Creates c;
  c.seconds = tpuemu::bench::OnClients(clients, [&](int client) {
    HttpClient http("127.0.0.1", port, seconds(30));
    const std::string body = nlohmann::json{
        {"acceleratorType", "v4-8"},
        {"runtimeVersion",
         "tpu-ubuntu2204-base"}}.dump();
    for (int i = client; i < count; i += clients) {
      auto r =
          http.Request("POST", std::string(kNodes) + "?nodeId=" + prefix + std::to_string(i), body);
      if (!r.ok() || r->status != 200) {
        ++other;
        continue;
      }
      const nlohmann::json op = r->Json();
      if (!op.contains("error")) {
        ++accepted;
      } else if (op["error"].value("code", 0) == 8 &&
                 op["error"]
                         .value("message", std::string())
                         .find("There is no more capacity in the zone") == 0) {
        ++stockouts;
      } else {
        ++other;
      }
    }
  });
  c.accepted = accepted;
  c.stockouts = stockouts;
  c.other = other;
  return c;
}

double PerSecond(int n, double s) { return s > 0 ? n / s : 0; }

// Waits until every node prefix0..count-1 is `state` ("GONE": 404).
bool WaitAll(NodeApi& api, const std::string& prefix, int count, const std::string& state,
             Clock::time_point deadline) {
  for (int i = 0; i < count; ++i) {
    if (!api.WaitState(prefix + std::to_string(i), state, deadline)) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = Parse(argc, argv);
  std::printf("CPU: %s\n", tpuemu::bench::CpuModel().c_str());
  if (geteuid() != 0) {
    std::printf("bench_worker_capacity: skipped: worker sandboxes need root (run as root)\n");
    return 0;
  }
  char tmpl[] = "/tmp/tpuemu-bench-capacity-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string root = tmpl;
  int rc = 0;
  {
    DaemonProcess sandboxed, records;
    std::filesystem::create_directories(root + "/auto");
    std::filesystem::create_directories(root + "/off");
    if (!sandboxed.Start(tpuemu::testing::TestDaemonArgs(
            {"--data-dir", root + "/auto"},
            {"--worker-sandboxes", "auto", "--worker-max", std::to_string(f.budget),
             // --worker-max the one budget that binds, whatever this host's RAM and pids
             "--worker-memory-budget-bytes", "0", "--worker-pids-budget", "0",
             "--worker-stop-grace-ms", "500"})) ||
        !records.Start(tpuemu::testing::TestDaemonArgs({"--data-dir", root + "/off"},
                                                       {"--worker-sandboxes", "off"}))) {
      std::fprintf(stderr, "bench_worker_capacity: tpuemud did not start (%s)\n", root.c_str());
      rc = 1;
    } else {
      const Creates up = CreateMany(sandboxed.port(), f.clients, "s", f.budget);
      NodeApi api(sandboxed.port());
      const nlohmann::json first = api.Get("s0");
      const nlohmann::json sandbox = first.is_object()
                                         ? first.value("workerSandbox", nlohmann::json::object())
                                         : nlohmann::json::object();
      if (!sandbox.value("enabled", false)) {
        std::printf("bench_worker_capacity: skipped: workerSandbox.enabled is false (%s)\n",
                    sandbox.value("reason", std::string("no reason given")).c_str());
      } else {
        const Creates past = CreateMany(sandboxed.port(), f.clients, "x", f.over);
        const Creates base = CreateMany(records.port(), f.clients, "r", f.budget);
        const double sandboxed_per_s = PerSecond(up.accepted, up.seconds);
        const double records_per_s = PerSecond(base.accepted, base.seconds);
        std::printf("%d clients, v4-8 creates (1 worker each), --worker-max %d:\n", f.clients,
                    f.budget);
        std::printf("  up to the budget, sandboxes on:  %4d accepted in %.4f s = %8.0f creates/s\n",
                    up.accepted, up.seconds, sandboxed_per_s);
        std::printf(
            "  the same, records (sandboxes off): %4d accepted in %.4f s = %8.0f creates/s\n",
            base.accepted, base.seconds, records_per_s);
        std::printf("  ratio sandboxed/records: %.2f\n",
                    records_per_s > 0 ? sandboxed_per_s / records_per_s : 0);
        std::printf(
            "  past the budget: %4d of %d refused at once (stockout, code 8) in %.4f s = "
            "%8.0f refusals/s\n",
            past.stockouts, f.over, past.seconds, PerSecond(past.stockouts, past.seconds));
        Check(up.accepted == f.budget && up.other == 0, "every create up to the budget accepted");
        Check(base.accepted == f.budget, "every records create accepted");
        Check(past.stockouts == f.over, "every create past the budget is the zone's stockout");
        const auto t0 = Clock::now();
        const bool ready = WaitAll(api, "s", f.budget, "READY", t0 + seconds(f.timeout_s));
        std::printf(
            "  the %d sandboxed nodes READY (every worker answering SSH) %.2f s after "
            "the creates\n",
            f.budget, tpuemu::bench::Seconds(Clock::now() - t0));
        Check(ready, "every sandboxed node READY");
      }
      for (int i = 0; i < f.budget; ++i) api.Delete("s" + std::to_string(i));
      const bool gone = WaitAll(api, "s", f.budget, "GONE", Clock::now() + seconds(f.timeout_s));
      const int left = tpuemu::bench::WaitNoSandboxes(root, sandboxed.pid(), seconds(30));
      Check(gone && left == 0, "every node deleted, no tpuemu-sandbox process left");
    }
    sandboxed.Kill(SIGTERM);
    records.Kill(SIGTERM);
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  if (rc != 0) return rc;
  return tpuemu::bench::ChecksFailed() > 0 ? 2 : 0;
}
