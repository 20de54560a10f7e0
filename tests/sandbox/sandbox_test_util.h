// Shared by the sandbox tests: a temporary folder, Probe with a skip, and waiting on a condition.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "sandbox/support.h"
#include "sandbox/worker_box.h"

namespace tpuemu::sandbox::testing {

// A fresh folder under /tmp, wiped at the end.
class TempDir {
 public:
  TempDir() {
    std::string templ = "/tmp/tpuemu-sbx-test-XXXXXX";
    path_ = mkdtemp(templ.data()) != nullptr ? templ : "";
  }
  ~TempDir() {
    if (!path_.empty()) (void)Wipe(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Polls `cond` every 5 ms until it holds or `timeout` passes; returns its last value.
inline bool WaitFor(const std::function<bool()>& cond,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() >= deadline) return cond();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

inline bool PathExists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace tpuemu::sandbox::testing
