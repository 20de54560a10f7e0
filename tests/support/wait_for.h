// WaitFor: polls a condition until it holds or a deadline passes (tests never sleep to
// synchronise).
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace tpuemu::testing {

inline bool WaitFor(const std::function<bool()>& condition,
                    std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return condition();
}

}  // namespace tpuemu::testing
