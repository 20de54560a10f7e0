// The README cannot rot: every ```sh block that calls curl or tpuctl runs, in README order, with
// bash against a live tpuemud (ephemeral port, delays 0, in-memory store). Each block runs in
// its own bash (cwd: a temp dir whose `build` links to this build tree) after
// readme_prelude.sh, with E and TPUEMU_ENDPOINT exported, tpuctl on PATH and the README's 8470
// rewritten to the live port; TPUEMU_PORT is a second free port, for blocks that start their own
// tpuemud (the CI script). A failure names the block, its README line and the failing command.
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/cli/child_process.h"
#include "tests/e2e/daemon_process.h"
#include "tests/readme/readme_blocks.h"

namespace tpuemu::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// A port nobody listened on a moment ago (bound to 0, then released).
uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(ReadmeBlocksTest, ExtractsShellBlocksThatCallCurlOrTpuctl) {
  const std::string md =
      "intro\n```sh\nscripts/run\n```\n"      // no curl/tpuctl: not a test block
      "```sh\ncurl -s \"$E/healthz\"\n```\n"  // line 5
      "<!-- readme-test: skip -->\n\n```sh\ntpuctl compute tpus locations list\n```\n"
      "```json\n{\"curl\": 1}\n```\n"                                // not shell
      "```sh\nX=$(tpuctl jobs list --zone z)\n```\n"                 // line 16
      "```sh\necho curling; ls cli/tpuctl/main.cpp\n```\n"           // mentions only
      "```sh\nbuild/cli/tpuctl compute tpus locations list\n```\n";  // line 22
  std::vector<ShellBlock> blocks = ExtractShellBlocks(md);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].fence_line, 5);
  EXPECT_EQ(blocks[0].text, "curl -s \"$E/healthz\"\n");
  EXPECT_FALSE(blocks[0].skip);
  EXPECT_TRUE(blocks[1].skip);
  EXPECT_EQ(blocks[2].fence_line, 16);
  EXPECT_FALSE(blocks[2].skip);
  EXPECT_EQ(blocks[3].fence_line, 22);
}

TEST(ReadmeTest, ShellExamplesRunInOrderAgainstALiveServer) {
  std::vector<ShellBlock> blocks = ExtractShellBlocks(ReadFile(README_PATH));
  ASSERT_FALSE(blocks.empty()) << "no ```sh blocks calling curl or tpuctl in " << README_PATH;

  DaemonProcess daemon;
  ASSERT_TRUE(daemon.Start({"--port", "0", "--db", ":memory:", "--log-level", "warn",
                            "--provisioning-delay-ms", "0", "--transition-delay-ms", "0",
                            "--worker-sandboxes", "off"}));
  const std::string port = std::to_string(daemon.port());
  const std::string endpoint = "http://127.0.0.1:" + port;

  const fs::path dir = fs::path(::testing::TempDir()) / ("readme-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink(BUILD_DIR, dir / "build");
  const char* path_env = std::getenv("PATH");
  std::map<std::string, std::string> env = {
      {"E", endpoint},
      {"TPUEMU_ENDPOINT", endpoint},
      {"TPUEMU_PORT", std::to_string(FreePort())},
      {"TPUEMU_PROJECT", ""},
      {"TPUEMU_ZONE", ""},
      {"PATH", std::string(TPUCTL_DIR) + ":" + (path_env ? path_env : "/usr/bin:/bin")}};

  int ran = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const ShellBlock& block = blocks[i];
    if (block.skip) continue;
    const fs::path script = dir / ("block-" + std::to_string(i + 1) + ".sh");
    // Line 1 and 2 set up; the block starts on line 3 (the prelude's ERR trap relies on it).
    std::ofstream(script) << "README_FIRST_LINE=" << block.fence_line + 1 << "\n"
                          << "source '" << PRELUDE_PATH << "'\n"
                          << ReplaceAll(block.text, "8470", port);
    ProcessResult r = ChildProcess::Run(
        {"/bin/bash", "-c", "cd '" + dir.string() + "' && exec bash '" + script.string() + "'"},
        env);
    ++ran;
    ASSERT_EQ(r.exit_code, 0) << "README.md block #" << i + 1 << " (```sh at line "
                              << block.fence_line << ") failed with exit " << r.exit_code
                              << ".\n--- block ---\n"
                              << block.text << "--- stderr (names the failing command) ---\n"
                              << r.err << "--- stdout ---\n"
                              << r.out;
  }
  EXPECT_GT(ran, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tpuemu::testing
