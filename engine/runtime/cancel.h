// CancelToken: how a running program learns that it must stop — a caller-owned flag (a job's
// :cancel) and an optional deadline (a job's timeout).
//
// Long kernels poll it between units of work that each take well under 100 ms (GEMM tiles and
// passes, conv image chunks, elementwise chunks), so a stop takes effect within a fraction of a
// second whatever the op size. Polling costs one relaxed atomic load and, with a deadline, one
// steady_clock read.
// Threading: the token is a value holding a borrowed pointer; any thread may poll it while the
// flag's owner sets the flag from another thread. The flag must outlive every use of the token.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpuemu::engine {

struct CancelToken {
  const std::atomic<bool>* flag = nullptr;  // not owned; null = no cancel flag
  std::optional<std::chrono::steady_clock::time_point> deadline;

  // True once the flag is set or the deadline has passed.
  bool Stopped() const {
    if (flag != nullptr && flag->load(std::memory_order_relaxed)) return true;
    return deadline.has_value() && std::chrono::steady_clock::now() >= *deadline;
  }

  // OK while running; CANCELLED "execution cancelled <where>" once the flag is set, else
  // DEADLINE_EXCEEDED "execution deadline exceeded <where>" once the deadline passed. `where`
  // reads like "in op 'x'".
  Status Check(std::string_view where) const {
    if (flag != nullptr && flag->load(std::memory_order_relaxed)) {
      return Status::Cancelled("execution cancelled " + std::string(where));
    }
    if (deadline.has_value() && std::chrono::steady_clock::now() >= *deadline) {
      return Status::DeadlineExceeded("execution deadline exceeded " + std::string(where));
    }
    return Status::Ok();
  }
};

}  // namespace tpuemu::engine
