// SeededRng: the random numbers behind the faults, from one --fault-seed, so a run that makes the
// same calls in the same order sees the same faults. Each fault draws from its own stream
// (derived from the seed and the stream's name), so preemption draws do not shift chaos draws.
// Thread-safe (mu_).
#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <string_view>

namespace tpuemu::service {

class SeededRng {
 public:
  SeededRng(uint64_t seed, std::string_view stream);

  // Uniform in [0, 1).
  double Uniform();
  // True with probability p (p <= 0: never, p >= 1: always, without drawing).
  bool Bernoulli(double p);

 private:
  std::mutex mu_;
  std::mt19937_64 engine_;  // guarded by mu_
};

}  // namespace tpuemu::service
