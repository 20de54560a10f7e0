// bench_crash_soak (issue 26 item 6): the mixed load of the kill -9 test (tests/e2e/crash_load.h)
// for a few minutes against a real tpuemud that is killed with SIGKILL every --kill-interval-ms and
// restarted on the same store. Per mutation kind it prints how many were acknowledged, how many
// were lost (acknowledged, effect missing after a restart) and how many were late (effect visible
// later than README.md promises):
//   - a cancel of a queued or running job: CANCELLED in its own reply ("the job is CANCELLED in
//     the store before the reply, which shows it so");
//   - a node create, patch, stop, start or delete: its operation done by createTime + its delay
//     (--provisioning-delay-ms for a create, --transition-delay-ms for the others) + --tolerance-ms
//     (bench_transitions' target, p99 lag <= 100 ms); when a kill falls before that, by the restart
//     that followed it + --tolerance-ms ("a transition that was running when the process died
//     resumes at its persisted due time after restart").
// Jobs, preemptions and queued resources have no time promise: only lost is counted for them.
// Also prints the CPU model, the number of kills and the restart time (exec to the ready line).
// Exits 2 when an acknowledged mutation was lost or tpuemud answered 5xx, 1 on a setup failure.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_model.h"
#include "tests/e2e/crash_load.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_server.h"

namespace {

using namespace tpuemu::testing;  // NOLINT: the load's names read as in the crash test
using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
  double minutes = 3;
  int kill_interval_ms = 2000;
  std::string store = "sqlite";
  int clients = 4;
  int delay_ms = 30;
  int tolerance_ms = 100;
  int max_rounds = 10000;
};

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t UnixMs(const std::string& rfc3339) {
  // "2026-11-27T21:15:14.265155Z": seconds via timegm, then the fraction's milliseconds.
  std::tm tm{};
  if (strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  const std::size_t dot = rfc3339.find('.');
  if (dot == std::string::npos) return ms;
  std::string digits;
  for (std::size_t i = dot + 1; i < rfc3339.size() && digits.size() < 3 &&
                                std::isdigit(static_cast<unsigned char>(rfc3339[i]));
       ++i) {
    digits += rfc3339[i];
  }
  digits.resize(3, '0');
  return ms + std::atoi(digits.c_str());
  return ms;
}

// From a kill -9 to the ready line of the tpuemud started after it (Unix ms).
struct Downtime {
  int64_t kill_ms = 0;
  int64_t ready_ms = 0;
};

struct Tally {
  std::map<std::string, std::set<std::string>> lost;  // kind -> resources
  std::map<std::string, int> late;                    // kind -> count
  std::vector<std::string> samples;                   // the first few messages
  void Lose(const std::string& kind, const std::string& resource, const std::string& message) {
    if (lost[kind].insert(resource).second && samples.size() < 10) samples.push_back(message);
  }
};

void Count(const EffectCheck& check, Tally& tally) {
  for (const Violation& v : check.violations) tally.Lose(v.kind, v.resource, v.message);
}

// Waits (at most 60 s) until no job is QUEUED or RUNNING and no node is mid-transition.
bool WaitSettled(HttpClient& c) {
  const std::string base = std::string("/v2/projects/") + kProject + "/locations/-/";
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    bool settled = true;
    for (const char* state : {"QUEUED", "RUNNING"}) {
      auto jobs = ListAll(c, base + "jobs?state=" + state, "jobs");
      settled = settled && jobs && jobs->empty();
    }
    auto nodes = ListAll(c, base + "nodes", "nodes");
    settled = settled && nodes;
    for (const json& n : nodes.value_or(std::vector<json>{})) {
      const std::string state = n.value("state", "");
      settled = settled && (state == "READY" || state == "STOPPED" || state == "PREEMPTED");
    }
    if (settled) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Every operation of the zone: name -> {done, createTime, endTime} in Unix ms.
struct OperationTimes {
  bool done = false;
  int64_t create_ms = 0;
  int64_t end_ms = 0;
};
std::map<std::string, OperationTimes> ListOperations(HttpClient& c) {
  std::map<std::string, OperationTimes> out;
  std::optional<std::vector<json>> ops =
      ListAll(c, std::string(kParent) + "/operations", "operations");
  for (const json& op : ops.value_or(std::vector<json>{})) {
    const json& m = op.value("metadata", json::object());
    out[op.value("name", "")] = {op.value("done", false), UnixMs(m.value("createTime", "")),
                                 UnixMs(m.value("endTime", ""))};
  }
  return out;
}

Options Parse(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_crash_soak: the crash test's mixed load with kill -9 rounds for minutes"};
  app.add_option("--minutes", o.minutes, "length of the load")
      ->check(CLI::Range(0.05, 120.0))
      ->capture_default_str();
  app.add_option("--kill-interval-ms", o.kill_interval_ms, "load time between two kill -9s")
      ->check(CLI::Range(50, 600000))
      ->capture_default_str();
  app.add_option("--store", o.store, "sqlite (a durable file) or postgresql (a private server)")
      ->check(CLI::IsMember({"sqlite", "postgresql"}))
      ->capture_default_str();
  app.add_option("--clients", o.clients, "client threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--delay-ms", o.delay_ms, "tpuemud's provisioning and transition delay")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--tolerance-ms", o.tolerance_ms, "a transition may finish this long after due")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--max-rounds", o.max_rounds, "at most this many kill -9s")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return o;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tpuemu-crash-soak-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::vector<std::string> args = {"--port",
                                   "0",
                                   "--log-level",
                                   "error",
                                   "--provisioning-delay-ms",
                                   std::to_string(o.delay_ms),
                                   "--transition-delay-ms",
                                   std::to_string(o.delay_ms)};
  if (o.store == "postgresql") {
    if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) {
      std::fprintf(stderr, "no PostgreSQL: %s\n", why.c_str());
      return 1;
    }
    args.insert(args.end(), {"--db", PostgresServer::Shared().CreateDatabase()});
  } else {
    args.insert(args.end(), {"--data-dir", dir.string()});
  }
  std::printf("CPU: %s (%u hardware threads)\n", tpuemu::bench::CpuModel().c_str(),
              std::thread::hardware_concurrency());
  std::printf(
      "store %s, %d clients, %.2f min, kill -9 every %d ms, delays %d ms, tolerance %d ms\n",
      o.store.c_str(), o.clients, o.minutes, o.kill_interval_ms, o.delay_ms, o.tolerance_ms);

  Ledger ledger;
  Tally tally;
  std::vector<ClientState> states(static_cast<std::size_t>(o.clients));
  std::vector<Downtime> downs;
  std::vector<double> restart_s;
  int64_t effects_checked = 0;
  const auto end = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.minutes * 60e3));
  // Starts tpuemud; after a kill, times the restart and checks every acknowledged effect.
  auto start = [&](DaemonProcess& daemon, bool after_recovery) -> bool {
    const auto t0 = Clock::now();
    if (!daemon.Start(args)) return false;
    if (downs.empty()) return true;
    restart_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    downs.back().ready_ms = NowUnixMs();
    HttpClient checker("127.0.0.1", daemon.port(), std::chrono::seconds(30));
    if (after_recovery && !WaitSettled(checker)) tally.samples.push_back("not settled after 60 s");
    const Found found = ReadThroughApi(checker);
    if (!found.complete) return false;
    const EffectCheck check = CheckEffects(ledger, found, after_recovery);
    effects_checked += check.checked;
    Count(check, tally);
    return true;
  };

  int rounds = 0;
  for (; rounds < o.max_rounds && (rounds == 0 || Clock::now() < end); ++rounds) {
    DaemonProcess daemon;
    if (!start(daemon, /*after_recovery=*/false)) {
      std::fprintf(stderr, "round %d: tpuemud did not start or its lists failed\n", rounds);
      std::filesystem::remove_all(dir);
      return 1;
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int t = 0; t < o.clients; ++t) {
      clients.emplace_back(ClientLoad, daemon.port(), t, rounds, std::ref(ledger), std::ref(stop),
                           std::ref(states[static_cast<std::size_t>(t)]));
    }
    // The load runs for the interval (a pace, not a synchronisation), then the kill lands under it.
    std::this_thread::sleep_for(std::chrono::milliseconds(o.kill_interval_ms));
    downs.push_back({NowUnixMs(), 0});
    daemon.Kill(SIGKILL);
    stop = true;
    for (std::thread& t : clients) t.join();
  }

  // A last restart: recovery finishes everything; then every effect and every operation's time.
  DaemonProcess last;
  if (!start(last, /*after_recovery=*/true)) {
    std::fprintf(stderr, "the last restart failed\n");
    std::filesystem::remove_all(dir);
    return 1;
  }
  HttpClient c("127.0.0.1", last.port(), std::chrono::seconds(60));
  const Found found = ReadThroughApi(c);
  const std::map<std::string, OperationTimes> ops = ListOperations(c);
  std::lock_guard lock(ledger.mu);
  for (const auto& [job, node] : ledger.jobs) {
    if (!found.job_state.count(job)) tally.Lose("job", job, "acknowledged job lost: " + job);
  }
  for (const auto& [job, cancel] : ledger.cancels) {
    if (cancel.kind != "cancel-ended" && cancel.state != "CANCELLED") ++tally.late[cancel.kind];
  }
  int late_across_kill = 0;
  for (const AckedOperation& op : ledger.operations) {
    const auto it = ops.find(op.name);
    if (it == ops.end()) {
      tally.Lose(op.kind, op.name, "acknowledged operation lost: " + op.name);
      continue;
    }
    if (op.kind == "preempt") continue;  // no time promise
    // One flag sets both delays: --provisioning-delay-ms (create) and --transition-delay-ms.
    int64_t deadline = it->second.create_ms + o.delay_ms;
    bool across_kill = false;
    for (const Downtime& d : downs) {
      if (d.kill_ms <= deadline + o.tolerance_ms && d.ready_ms > deadline &&
          d.kill_ms >= it->second.create_ms) {
        deadline = d.ready_ms;
        across_kill = true;
      }
    }
    if (!it->second.done || it->second.end_ms > deadline + o.tolerance_ms) {
      ++tally.late[op.kind];
      late_across_kill += across_kill ? 1 : 0;
      if (tally.samples.size() < 10) {
        tally.samples.push_back("late " + op.kind + " " + op.name + ": ended " +
                                std::to_string(it->second.end_ms - deadline) + " ms past due");
      }
    }
  }
  const bool graceful = last.Kill(SIGTERM) == 0;
  std::filesystem::remove_all(dir);

  std::map<std::string, int> acks = ledger.acks_by_kind;
  std::vector<std::string> kinds(std::begin(kKinds), std::end(kKinds));
  kinds.push_back("cancel-ended");
  const std::set<std::string> timed = {"create", "patch",         "stop",          "start",
                                       "delete", "cancel-queued", "cancel-running"};
  std::printf("%-16s %12s %8s %8s\n", "kind", "acknowledged", "lost", "late");
  int64_t lost_total = 0;
  for (const std::string& kind : kinds) {
    const int64_t lost = static_cast<int64_t>(tally.lost[kind].size());
    lost_total += lost;
    std::printf("%-16s %12d %8lld %8s\n", kind.c_str(), acks[kind], static_cast<long long>(lost),
                timed.count(kind) ? std::to_string(tally.late[kind]).c_str() : "-");
  }
  std::printf(
      "kill -9 rounds: %d; restart to the ready line: p50 %.3f s, max %.3f s; %lld effects "
      "checked; late across a kill: %d; 5xx replies: %zu; graceful stop at the end: %s\n",
      rounds, Percentile(restart_s, 0.5), Percentile(restart_s, 1.0),
      static_cast<long long>(effects_checked), late_across_kill, ledger.errors.size(),
      graceful ? "exit 0" : "FAILED");
  for (const std::string& s : tally.samples) std::printf("  %s\n", s.c_str());
  for (std::size_t i = 0; i < ledger.errors.size() && i < 5; ++i) {
    std::printf("  5xx: %s\n", ledger.errors[i].c_str());
  }
  std::printf("%s\n", lost_total == 0 && ledger.errors.empty()
                          ? "PASS: no acknowledged mutation lost"
                          : "FAIL: acknowledged mutations lost or 5xx replies");
  return lost_total == 0 && ledger.errors.empty() ? 0 : 2;
}
