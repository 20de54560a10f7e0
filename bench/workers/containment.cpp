#include "bench/workers/containment.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/store_load.h"
#include "bench/workers/child_command.h"
#include "bench/workers/node_api.h"
#include "bench/workers/sandbox_procs.h"

namespace tpuemu::bench {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The process count /workers reports for worker `w` of node `id` (-1 when absent).
namespace {

int64_t Processes(NodeApi& api, const std::string& id, size_t w) {
  const nlohmann::json workers = api.Workers(id);
  return w < workers.size() ? workers[w].value("processes", int64_t{-1}) : -1;
}

}  // namespace

void Containment(uint16_t port, pid_t daemon, const Options& o, const std::string& root) {
  std::printf("(d) containment: --worker-pids-max %lld --worker-memory-bytes %lld\n",
              static_cast<long long>(o.pids_max), static_cast<long long>(o.memory_bytes));
  const std::string key = root + "/id_ed25519";
  if (RunCommand({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bench", "-f", key}, "",
                 seconds(30)) != 0) {
    Check(false, "ssh-keygen made a key");
    return;
  }
  std::string pub = ReadProcFile(key + ".pub");
  while (!pub.empty() && (pub.back() == '\n' || pub.back() == '\r')) pub.pop_back();
  NodeApi api(port);
  const std::string id = "box";
  const auto t0 = Clock::now();
  if (!api.Create(id, "v4-32", {{"ssh-keys", "bench:" + pub}}) ||
      !api.WaitState(id, "READY", t0 + seconds(o.timeout_s))) {
    Check(false, "the v4-32 became READY");
    return;
  }
  Check(NotRunning(api, id) == 0, "every worker RUNNING at READY");
  struct Endpoint {
    std::string ip;
    int port = 0;
  };
  std::vector<Endpoint> eps;
  for (const auto& w : api.Workers(id))
    eps.push_back({w.value("externalIp", ""), w.value("sshPort", 0)});
  auto ssh = [&](size_t w, const std::string& command) {
    return SshArgv(key, "bench", eps[w].ip, eps[w].port, command);
  };
  // The user appears within the account sync period of READY.
  const auto ts = Clock::now();
  const std::string ssh_log = root + "/ssh.log";
  size_t answered = 0;
  while (answered < eps.size() && Clock::now() < ts + seconds(60)) {
    if (RunCommand(ssh(answered, "true"), ssh_log, seconds(20)) == 0) {
      ++answered;
    } else {
      std::this_thread::sleep_for(milliseconds(100));
    }
  }
  std::printf("  ssh as bench answered on %zu of %zu workers, %.2f s after READY\n", answered,
              eps.size(), Seconds(Clock::now() - ts));
  if (answered < eps.size() || eps.size() < 2) {
    const std::string log = ReadProcFile(ssh_log);
    std::printf("  ssh said: %s\n", log.substr(log.size() > 400 ? log.size() - 400 : 0).c_str());
    Check(false, "ssh into every worker");
    return;
  }
  // Only with the limits in place: a bomb outside a cgroup would take the machine down. The
  // workers' inits live in the worker cgroups (the outer boot helpers stay in tpuemud's).
  int limited = 0, in_cgroup = 0;
  for (pid_t p : SandboxPids(root, daemon)) {
    const int64_t pids = CgroupLimit(p, "pids", "pids.max", "pids.max");
    const int64_t mem = CgroupLimit(p, "memory", "memory.limit_in_bytes", "memory.max");
    if (pids < 0 || pids == std::numeric_limits<int64_t>::max()) continue;  // not a worker's
    ++in_cgroup;
    limited += pids == o.pids_max && mem > 0 && mem <= o.memory_bytes;
  }
  std::printf(
      "  %d sandbox processes in worker cgroups, %d of them under pids.max %lld and "
      "the memory limit\n",
      in_cgroup, limited, static_cast<long long>(o.pids_max));
  if (in_cgroup < static_cast<int>(eps.size()) || limited != in_cgroup) {
    Check(false, "worker cgroup limits in place (bomb and hog not run)");
    return;
  }

  std::vector<double> before, during;
  for (int i = 0; i < o.gets; ++i) {
    before.push_back(api.TimedGet(id));
    std::this_thread::sleep_for(milliseconds(o.get_interval_ms));
  }
  const std::string hog_out = root + "/hog.out";
  const pid_t hog = SpawnCommand(ssh(0, "python3 -c 'b=bytearray(8<<30)'; exit $?"), hog_out);
  // The hog's python starts before the bomb takes every pid of the worker; ulimit -u is a second
  // bound, far above pids-max, should the cgroup be missing after all. The bomb's first bash
  // returns at once (its forks live on in the background), so it execs a sleep to keep timeout
  // waiting; at the timeout, timeout kills its whole process group, where every fork of the bomb
  // stays.
  const std::string bomb_s = std::to_string(o.bomb_seconds);
  const pid_t bomb = SpawnCommand(
      ssh(0, "sleep 1; ulimit -u 4096; timeout -s KILL " + bomb_s +
                 " bash -c ':(){ :|:& };:; exec sleep " + bomb_s + "' >/dev/null 2>&1; exit $?"),
      "");
  const auto tb = Clock::now();
  int64_t max_processes = 0;
  for (int i = 0; i < o.gets; ++i) {
    during.push_back(api.TimedGet(id));
    if (i % 8 == 0) max_processes = std::max(max_processes, Processes(api, id, 0));
    std::this_thread::sleep_for(milliseconds(o.get_interval_ms));
  }
  const bool bomb_running = TryWait(bomb) == -2;
  std::vector<int> others;
  std::vector<double> others_s;
  for (size_t w = 1; w < eps.size(); ++w) {
    const auto tw = Clock::now();
    others.push_back(RunCommand(ssh(w, "true"), "", seconds(30)));
    others_s.push_back(Seconds(Clock::now() - tw));
  }
  const int hog_rc = WaitExit(hog, seconds(60));
  int bomb_rc = -2;
  while ((bomb_rc = TryWait(bomb)) == -2 && Clock::now() < tb + seconds(o.bomb_seconds + 30)) {
    max_processes = std::max(max_processes, Processes(api, id, 0));
    std::this_thread::sleep_for(milliseconds(200));
  }
  if (bomb_rc == -2) bomb_rc = WaitExit(bomb, milliseconds(0));
  const auto tk = Clock::now();
  int64_t after = Processes(api, id, 0);
  while (after > 8 && Clock::now() < tk + seconds(30)) {
    std::this_thread::sleep_for(milliseconds(100));
    after = Processes(api, id, 0);
  }

  const int failed_gets = static_cast<int>(
      std::count_if(during.begin(), during.end(), [](double ms) { return ms < 0; }));
  std::printf("  GET node (%d, one per %d ms)   before: p50 %.3f ms  p99 %.3f ms\n", o.gets,
              o.get_interval_ms, Pct(before, 0.5), Pct(before, 0.99));
  std::printf("  GET node during hog + fork bomb: p50 %.3f ms  p99 %.3f ms  (%d failed)\n",
              Pct(during, 0.5), Pct(during, 0.99), failed_gets);
  std::printf("  ratio during/before: p50 %.2f  p99 %.2f\n", Pct(during, 0.5) / Pct(before, 0.5),
              Pct(during, 0.99) / Pct(before, 0.99));
  std::printf("  memory hog (bytearray(8<<30)) exit code %d%s\n", hog_rc,
              hog_rc == 137 ? " (SIGKILL: the worker's OOM kill)" : "");
  std::printf(
      "  fork bomb: worker 0 at most %lld processes (pids-max %lld); bomb session exit %d;"
      " %lld processes %.2f s after it ended\n",
      static_cast<long long>(max_processes), static_cast<long long>(o.pids_max), bomb_rc,
      static_cast<long long>(after), Seconds(Clock::now() - tk));
  for (size_t w = 0; w < others.size(); ++w) {
    std::printf("  worker %zu ssh during the bomb: exit %d in %.2f s\n", w + 1, others[w],
                others_s[w]);
  }
  Check(failed_gets == 0, "every GET answered during the load");
  Check(hog_rc == 137, "the memory hog was killed (exit 137)");
  Check(max_processes > 0 && max_processes <= o.pids_max, "worker processes <= pids-max");
  Check(bomb_running, "the bomb still ran while the GETs were measured");
  Check(bomb_rc == 137 && after >= 0 && after <= 8, "the bomb's processes ended at its timeout");
  Check(std::all_of(others.begin(), others.end(), [](int rc) { return rc == 0; }),
        "the other workers answered ssh during the bomb");

  const auto td = Clock::now();
  api.Delete(id);
  const bool gone = api.WaitState(id, "GONE", td + seconds(60), milliseconds(10));
  const int left = WaitNoSandboxes(root, daemon, seconds(30));
  std::printf("  deleted; sandbox processes gone %.2f s after the delete\n",
              Seconds(Clock::now() - td));
  Check(gone && left == 0, "no tpuemu-sandbox process left after the delete");
}

}  // namespace tpuemu::bench
