// The escape suite through the public surface (issue 41): a tenant who is root in their own TPU
// VM probes the network — other projects' workers and metadata, the host's API, the node's other
// workers, the metadata server's budget — and each probe asserts containment while tpuemud keeps
// answering. Traffic goes only to loopback and to addresses inside namespaces tpuemud made.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/workers_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

#define SKIP_UNLESS_SANDBOXED(node)                                           \
  if (!(node).value("workerSandbox", json::object()).value("enabled", false)) \
  GTEST_SKIP() << "tpuemud runs no worker sandboxes here: " << (node).dump()

std::string Internal(const json& node, int worker) {
  return node["networkEndpoints"][worker]["ipAddress"].get<std::string>();
}

// curl's HTTP status for `url` (000 when nothing answered within 2 s) and its body. `url` is
// double-quoted: the worker's shell expands $TPUEMU_ENDPOINT in it.
std::string Curl(const std::string& url, const std::string& extra = "") {
  return "curl -s -m 2 -o /tmp/body -w '%{http_code}' -H Metadata-Flavor:Google " + extra + " \"" +
         url + "\"; echo; cat /tmp/body 2>/dev/null; rm -f /tmp/body";
}

using WorkersIsolationTest = WorkersTest;

TEST_F(WorkersIsolationTest, AWorkerReachesItsNodeItsMetadataAndItsProjectOnly) {
  json mine = CreateReady("mine", {{"acceleratorType", "v4-16"},
                                   {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
  SKIP_UNLESS_SANDBOXED(mine);
  json theirs = CreateReadyIn(
      "other", "theirs",
      {{"acceleratorType", "v4-8"},
       {"metadata", {{"ssh-keys", PublicKeyLine("tester")}, {"secret", "s3cret-of-other"}}}});
  ASSERT_EQ(mine["networkEndpoints"].size(), 2u);
  // Internal addresses are a block of this tpuemud's 10.<n>.0.0/16; the host's are 127.<n>.x.y.
  const std::string block = mine["cidrBlock"];
  const std::string n = Ip(mine, 0).substr(4, Ip(mine, 0).find('.', 4) - 4);
  EXPECT_EQ(block.rfind("10." + n + ".", 0), 0u) << block << " vs " << Ip(mine, 0);
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(Internal(mine, w).rfind(block.substr(0, block.rfind('.') + 1), 0), 0u) << block;
  }

  // Its own metadata, at Google's address, as an unprivileged user.
  EXPECT_EQ(Ssh(mine, 0, Curl("http://169.254.169.254/computeMetadata/v1/project/project-id")).out,
            "200\nproj");
  EXPECT_EQ(Ssh(mine, 1,
                Curl("http://metadata.google.internal/computeMetadata/v1/instance/"
                     "attributes/agent-worker-number"))
                .out,
            "200\n1");
  // Another project's worker, by its internal or its external address: not there.
  for (const std::string& ip : {Internal(theirs, 0), Ip(theirs, 0)}) {
    const std::string seen =
        Ssh(mine, 0,
            Curl("http://" + ip + "/computeMetadata/v1/instance/attributes/secret") + "; " +
                "sudo " + Curl("http://" + ip + ":22/"))
            .out;
    EXPECT_EQ(seen.find("s3cret"), std::string::npos) << ip << ": " << seen;
    EXPECT_EQ(seen.rfind("000", 0), 0u) << ip << ": " << seen;
  }
  EXPECT_EQ(
      Ssh(theirs, 0, Curl("http://169.254.169.254/computeMetadata/v1/instance/attributes/secret"))
          .out,
      "200\ns3cret-of-other");

  // The API: for its own project through its endpoint, nothing else; the host's not at all.
  const std::string api = "$TPUEMU_ENDPOINT/v2/projects/";
  EXPECT_EQ(Ssh(mine, 0, "echo $TPUEMU_ENDPOINT").out, "http://169.254.169.254:8470\n");
  std::string listed = Ssh(mine, 0, Curl(api + "proj/locations/" + kWorkersZone + "/nodes")).out;
  EXPECT_EQ(listed.rfind("200\n", 0), 0u) << listed;
  EXPECT_NE(listed.find("nodes/mine"), std::string::npos) << listed;
  listed = Ssh(mine, 0, Curl(api + "other/locations/" + kWorkersZone + "/nodes")).out;
  EXPECT_EQ(listed.rfind("403\n", 0), 0u) << listed;
  EXPECT_EQ(listed.find("theirs"), std::string::npos) << listed;
  EXPECT_EQ(Ssh(mine, 0, Curl("$TPUEMU_ENDPOINT/_emulator/reset", "-X POST")).out.substr(0, 3),
            "403");
  EXPECT_EQ(Ssh(mine, 0, Curl("http://127.0.0.1:" + std::to_string(daemon_.port()) + "/readyz"))
                .out.substr(0, 3),
            "000")
      << "the host's API is not reachable from inside";

  // Root inside sniffs nothing: no packet sockets.
  EXPECT_EQ(Ssh(mine, 0,
                "sudo python3 -c 'import socket\n"
                "try:\n"
                "  socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print(\"open\")\n"
                "except PermissionError: print(\"refused\")'")
                .out,
            "refused\n");

  // Both workers of the node listen on 0.0.0.0:8476 at once and reach each other there.
  for (int w = 0; w < 2; ++w) {
    ASSERT_EQ(Ssh(mine, w,
                  "nohup python3 -c 'import socket\n"
                  "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                  "s.bind((\"0.0.0.0\", 8476)); s.listen(4)\n"
                  "while True:\n"
                  "  c, _ = s.accept(); c.sendall(socket.gethostname().encode()); c.close()' "
                  ">/dev/null 2>&1 &")
                  .exit_code,
              0);
  }
  for (int w = 0; w < 2; ++w) {
    const std::string peer = Internal(mine, 1 - w);
    std::string got;
    EXPECT_TRUE(WaitFor(
        [&] {
          got = Ssh(mine, w,
                    "python3 -c 'import socket; print(socket.create_connection((\"" + peer +
                        "\", 8476), timeout=2).recv(100).decode())'")
                    .out;
          return got.find("-w-" + std::to_string(1 - w)) != std::string::npos;
        },
        std::chrono::seconds(15)))
        << "worker " << w << " reaching " << peer << ": " << got;
  }
  // The host's namespace has no address or route of the workers' networks.
  const std::string fib = ChildProcess::Run({"/bin/cat", "/proc/net/fib_trie"}, {}).out;
  for (int w = 0; w < 2; ++w) EXPECT_EQ(fib.find(Internal(mine, w)), std::string::npos);
}

// One worker holding 1,100 metadata long-polls spends its own budget, never the API's or the
// other workers'.
TEST_F(WorkersIsolationTest, OneWorkersLongPollsStarveNeitherTheApiNorItsNeighbours) {
  json node = CreateReady("polls", {{"acceleratorType", "v4-16"},
                                    {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
  SKIP_UNLESS_SANDBOXED(node);
  const char* kFlood = R"py(
import json, resource, socket, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
req = (b"GET /computeMetadata/v1/instance/attributes/?wait_for_change=true&timeout_sec=30 "
       b"HTTP/1.1\r\nHost: metadata.google.internal\r\nMetadata-Flavor: Google\r\n\r\n")
socks = []
for _ in range(1100):
    s = socket.create_connection(("169.254.169.254", 80), timeout=5)
    try:
        s.sendall(req)
    except OSError:  # refused past the budget, and closed already
        pass
    socks.append(s)
time.sleep(2)
refused = 0
for s in socks:
    s.setblocking(False)
    try:
        if s.recv(64).startswith(b"HTTP/1.1 503"):
            refused += 1
    except BlockingIOError:
        pass
    except OSError:  # reset after its 503
        refused += 1
open("/tmp/flooding", "w").close()
print(json.dumps({"opened": len(socks), "refused": refused}), flush=True)
time.sleep(12)
)py";
  ProcessResult flood;
  std::thread flooder([&] {
    std::string cmd;
    for (const std::string& a : SshArgs(node, 0, "tester", "python3 -")) cmd += "'" + a + "' ";
    const std::string script = (dir_ / "flood.py").string();
    ChildProcess::Run({"/bin/sh", "-c", "cat > " + script + " <<'EOF'\n" + kFlood + "\nEOF\n"}, {});
    flood = ChildProcess::Run({"/bin/sh", "-c", cmd + "< " + script}, {});
  });
  ASSERT_TRUE(WaitFor([&] { return Ssh(node, 0, "test -f /tmp/flooding").exit_code == 0; },
                      std::chrono::seconds(60)));
  // While the polls are held: the API and /readyz answer, as does the other worker's metadata.
  std::vector<double> ms;
  for (int i = 0; i < 50; ++i) {
    const auto start = Clock::now();
    Result<ClientResponse> ready = client_->Request("GET", "/readyz");
    Result<ClientResponse> got = client_->Request("GET", Base() + "/nodes/polls");
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() / 2);
    ASSERT_TRUE(ready.ok() && ready->status == 200);
    ASSERT_TRUE(got.ok() && got->status == 200);
  }
  std::sort(ms.begin(), ms.end());
  std::cout << "while one worker holds 1,100 metadata long-polls: API/readyz p50 " << ms[25]
            << " ms, p99 " << ms[49] << " ms (50 requests each)\n";
  EXPECT_EQ(Ssh(node, 1, Curl("http://169.254.169.254/computeMetadata/v1/project/project-id")).out,
            "200\nproj");
  flooder.join();
  ASSERT_EQ(flood.exit_code, 0) << flood.err;
  const json counts = json::parse(flood.out.substr(0, flood.out.find('\n')));
  EXPECT_EQ(counts["opened"], 1100);
  // The worker's own share is 64 connections (daemon/app.cpp): the rest were refused at once.
  EXPECT_GE(counts["refused"].get<int>(), 1100 - 64) << flood.out;
}

// What the host holds for node `uid`'s workers and for tpuemud's slice networks: processes
// (boot helpers and inits, by their --dir; slice-network holders, tpuemud's children), the
// network namespaces they are in, loop devices backing their disks, their cgroup folders.
struct Held {
  std::set<std::string> pids;
  std::set<std::string> netns;
  int loop_devices = 0;
  int cgroups = 0;
};

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Held HeldFor(const std::string& workers_dir, const std::string& uid, pid_t tpuemud) {
  Held held;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = Slurp(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find("tpuemu-sandbox") == std::string::npos) continue;
    // "pid (comm) S ppid ...", unless the process ended meanwhile.
    const std::string stat = Slurp(entry.path() / "stat");
    const size_t comm_end = stat.rfind(')');
    if (comm_end == std::string::npos || comm_end + 4 > stat.size()) continue;
    const long ppid = std::strtol(stat.c_str() + comm_end + 4, nullptr, 10);
    const bool worker = cmdline.find(workers_dir + "/" + uid) != std::string::npos;
    const bool network =
        cmdline.find(" net ") != std::string::npos && ppid == static_cast<long>(tpuemud);
    if (!worker && !network) continue;
    held.pids.insert(pid);
    std::error_code ec;
    held.netns.insert(std::filesystem::read_symlink(entry.path() / "ns/net", ec).string());
  }
  for (int i = 0; i < 256; ++i) {
    const std::string backing = Slurp("/sys/block/loop" + std::to_string(i) + "/loop/backing_file");
    if (backing.find(workers_dir + "/" + uid) == 0) ++held.loop_devices;
  }
  for (const char* parent :
       {"/sys/fs/cgroup/memory/tpuemu", "/sys/fs/cgroup/pids/tpuemu", "/sys/fs/cgroup/tpuemu"}) {
    std::error_code ec;
    for (const auto& cg : std::filesystem::directory_iterator(parent, ec)) {
      if (cg.path().filename().string().find("-" + uid + "-w") != std::string::npos) {
        ++held.cgroups;
      }
    }
  }
  return held;
}

// No process, network namespace, loop device or cgroup of a gone worker remains: after a stop,
// a delete, and a kill -9 of tpuemud followed by a restart. (Mounts are never the host's: each
// worker's are in its own mount namespace, gone with it.)
TEST_F(WorkersIsolationTest, NothingOfAGoneWorkerRemains) {
  const std::string workers = (dir_ / "data" / "workers").string();
  json stopped = CreateReady("stopped", {{"acceleratorType", "v4-16"}});
  SKIP_UNLESS_SANDBOXED(stopped);
  json deleted = CreateReady("deleted", {{"acceleratorType", "v4-8"}});
  json crashed = CreateReady("crashed", {{"acceleratorType", "v4-16"}});
  const Held before_stop = HeldFor(workers, stopped["id"], daemon_.pid());
  EXPECT_EQ(before_stop.loop_devices, 2);
  EXPECT_GE(before_stop.cgroups, 2);
  EXPECT_GE(before_stop.pids.size(), 4u);  // 2 helpers, 2 inits

  ASSERT_TRUE(Send("POST", Base() + "/nodes/stopped:stop", json::object()).ok());
  ASSERT_TRUE(Send("DELETE", Base() + "/nodes/deleted", json::object()).ok());
  for (const json& gone : {stopped, deleted}) {
    Held left;
    EXPECT_TRUE(WaitFor(
        [&] {
          left = HeldFor(workers, gone["id"], -1);
          return left.pids.empty() && left.loop_devices == 0 && left.cgroups == 0;
        },
        std::chrono::seconds(30)))
        << gone["name"] << ": " << left.pids.size() << " processes, " << left.loop_devices
        << " loop devices, " << left.cgroups << " cgroups";
  }

  const Held running = HeldFor(workers, crashed["id"], daemon_.pid());
  ASSERT_EQ(running.loop_devices, 2);
  daemon_.Kill(SIGKILL);
  ASSERT_TRUE(daemon_.Start(
      TestDaemonArgs({"--data-dir", (dir_ / "data").string()}, {"--worker-sandboxes", "auto"})));
  client_ = std::make_unique<HttpClient>("127.0.0.1", daemon_.port());
  // The restarted tpuemud boots the node's workers again: only what the new boot holds remains.
  ASSERT_TRUE(WaitFor([&] { return Get(Base() + "/nodes/crashed").value("state", "") == "READY"; },
                      std::chrono::seconds(60)));
  Held after;
  EXPECT_TRUE(WaitFor(
      [&] {
        after = HeldFor(workers, crashed["id"], daemon_.pid());
        bool old_left = false;
        for (const std::string& pid : running.pids) old_left = old_left || after.pids.count(pid);
        // Namespace inode numbers are reused: the count tells (the workers', the slice's, and the
        // host's of the boot helpers).
        return !old_left && after.netns.size() == running.netns.size() && after.loop_devices == 2 &&
               after.cgroups == running.cgroups;
      },
      std::chrono::seconds(30)))
      << "after the restart: " << after.pids.size() << " processes (" << running.pids.size()
      << " before), " << after.netns.size() << " network namespaces (" << running.netns.size()
      << "), " << after.loop_devices << " loop devices, " << after.cgroups << " cgroups ("
      << running.cgroups << ")";
}

}  // namespace
}  // namespace tpuemu::testing
