// Runs the real tpuemu-engine binary (TPUEMU_ENGINE_BIN) for the CLI tests: exit code, stdout,
// stderr, and the JSON report.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace tpuemu::cli {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `tpuemu-engine <args>` through the shell; args are trusted test literals.
inline RunResult RunEngine(const std::string& args) {
  char err_path[] = "/tmp/tpuemu_engine_err_XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  const std::string cmd = std::string(TPUEMU_ENGINE_BIN) + " " + args + " 2>" + err_path;
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err_file(err_path);
  std::stringstream ss;
  ss << err_file.rdbuf();
  r.err = ss.str();
  std::remove(err_path);
  return r;
}

inline nlohmann::json RunJson(const std::string& args) {
  const RunResult r = RunEngine(args + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

}  // namespace tpuemu::cli
