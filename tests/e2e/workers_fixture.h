// A real tpuemud with worker sandboxes (service/workers/) and an OpenSSH client key: what the
// worker tests share. SetUp skips, saying why, where sandboxes cannot run (not root, no ssh
// client, the host refused them: the node's workerSandbox says why) — CI runs as root, so there
// they run.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/child_process.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {

inline constexpr char kWorkersZone[] = "us-central2-b";

class WorkersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "worker sandboxes need root (uid " << geteuid() << ")";
    if (Which("ssh").empty() || Which("ssh-keygen").empty() || Which("scp").empty()) {
      GTEST_SKIP() << "the OpenSSH client (ssh, scp, ssh-keygen) is not installed";
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("tpuemu-workers-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    key_ = (dir_ / "id_ed25519").string();
    ProcessResult keygen = ChildProcess::Run(
        {Which("ssh-keygen"), "-q", "-t", "ed25519", "-N", "", "-C", "tester", "-f", key_}, {});
    ASSERT_EQ(keygen.exit_code, 0) << keygen.err;
    if (as_scripts_run_) {
      // scripts/run's `tpuemud --data-dir data`, from dir_: a relative data folder, tpuemud's
      // defaults for the rest (but any free port, so tests may run side by side, and warnings
      // only: nobody reads the pipe of its stdout after the ready line).
      daemon_.SetWorkingDir(dir_.string());
      daemon_.KeepTpuemudDefaults();
      ASSERT_TRUE(daemon_.Start({"--port", "0", "--log-level", "warn", "--data-dir", "data"}));
    } else {
      std::vector<std::string> flags = {"--worker-sandboxes", "auto", "--worker-stop-grace-ms",
                                        "1500"};
      flags.insert(flags.end(), extra_daemon_args_.begin(), extra_daemon_args_.end());
      ASSERT_TRUE(daemon_.Start(TestDaemonArgs({"--data-dir", (dir_ / "data").string()}, flags)));
    }
    client_ = std::make_unique<HttpClient>("127.0.0.1", daemon_.port());
  }
  void TearDown() override {
    client_.reset();
    daemon_.Kill(SIGKILL);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  static std::string Which(const std::string& program) {
    for (const char* dir : {"/usr/bin/", "/bin/", "/usr/sbin/", "/usr/local/bin/"}) {
      std::string path = std::string(dir) + program;
      if (access(path.c_str(), X_OK) == 0) return path;
    }
    return "";
  }

  std::string Base() const { return std::string("/v2/projects/proj/locations/") + kWorkersZone; }
  std::string PublicKeyLine(const std::string& user) const {
    std::string pub = ChildProcess::Run({"/bin/cat", key_ + ".pub"}, {}).out;
    pub = pub.substr(0, pub.find(" tester"));
    return user + ":" + pub + " " + user;
  }
  nlohmann::json Get(const std::string& path) {
    Result<ClientResponse> r = client_->Request("GET", path);
    if (!r.ok()) return nullptr;
    return r->Json();
  }
  Result<ClientResponse> Send(const std::string& method, const std::string& path,
                              const nlohmann::json& body) {
    return client_->Request(method, path, body.dump());
  }
  // Creates node `id` and waits for READY; skips when the daemon runs it without sandboxes.
  nlohmann::json CreateReady(const std::string& id, nlohmann::json body) {
    return CreateReadyIn("proj", id, std::move(body));
  }
  // Node `id` of project `project` (CreateReady's, for any project), READY.
  nlohmann::json CreateReadyIn(const std::string& project, const std::string& id,
                               nlohmann::json body) {
    const std::string base = "/v2/projects/" + project + "/locations/" + kWorkersZone;
    body["runtimeVersion"] = "tpu-ubuntu2204-base";
    Result<ClientResponse> created = Send("POST", base + "/nodes?nodeId=" + id, body);
    EXPECT_TRUE(created.ok() && created->status == 200) << (created.ok() ? created->body : "");
    nlohmann::json node;
    EXPECT_TRUE(WaitFor(
        [&] {
          node = Get(base + "/nodes/" + id);
          return node.is_object() && node.value("state", "") == "READY";
        },
        std::chrono::seconds(60)))
        << node.dump();
    return node;
  }
  std::string Ip(const nlohmann::json& node, int worker) const {
    // The host reaches a sandboxed worker at its external address (its internal one exists only
    // on its slice's private network).
    return node["networkEndpoints"][worker]["accessConfig"]["externalIp"].get<std::string>();
  }
  std::string Port(const nlohmann::json& node, int worker) const {
    int port = node["networkEndpoints"][worker]["port"].get<int>();
    return std::to_string(port == 8470 ? 22 : port);
  }
  std::vector<std::string> SshArgs(const nlohmann::json& node, int worker, const std::string& user,
                                   const std::string& command) const {
    return {Which("ssh"),
            "-i",
            key_,
            "-p",
            Port(node, worker),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
            "-o",
            "ConnectTimeout=5",
            user + "@" + Ip(node, worker),
            command};
  }
  ProcessResult Ssh(const nlohmann::json& node, int worker, const std::string& command,
                    const std::string& user = "tester") {
    return ChildProcess::Run(SshArgs(node, worker, user, command), {});
  }
  // The events of kind "worker" so far, as "STATE message" lines.
  std::vector<std::string> WorkerEvents() {
    std::vector<std::string> out;
    nlohmann::json page = Get("/v2/projects/proj/events?since=0&pageSize=1000");
    if (!page.is_object()) return out;
    for (const auto& e : page["events"]) {
      if (e["kind"] == "worker")
        out.push_back(e["state"].get<std::string>() + " " + e["message"].get<std::string>());
    }
    return out;
  }
  bool HasEvent(const std::string& state, const std::string& text) {
    for (const std::string& e : WorkerEvents()) {
      if (e.rfind(state + " ", 0) == 0 && e.find(text) != std::string::npos) return true;
    }
    return false;
  }
  // A file the worker wrote, found in its folder on the host ("" when none).
  // File /root/`name` of a stopped worker, read from its boot disk (an ext4 image the host does
  // not mount: debugfs reads it) — the first disk that has it.
  std::string ReadStoppedWorkersRootFile(const std::string& name) {
    const std::string debugfs = Which("debugfs");
    if (debugfs.empty()) return "(no debugfs: Debian package e2fsprogs)";
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             dir_ / "data" / "workers",
             std::filesystem::directory_options::skip_permission_denied)) {
      if (entry.is_regular_file() && entry.path().filename() == "disk.img") {
        ProcessResult cat =
            ChildProcess::Run({debugfs, "-R", "cat /fs/root/" + name, entry.path().string()}, {});
        if (cat.exit_code == 0 && !cat.out.empty()) return cat.out;
      }
    }
    return "";
  }

  // Set by a test's constructor (before SetUp): more tpuemud flags; or start tpuemud as
  // scripts/run does (from dir_ with `--data-dir data`, nothing else but `--port 0`).
  std::vector<std::string> extra_daemon_args_;
  bool as_scripts_run_ = false;

  std::filesystem::path dir_;
  std::string key_;
  DaemonProcess daemon_;
  std::unique_ptr<HttpClient> client_;
};

}  // namespace tpuemu::testing
