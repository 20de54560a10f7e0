// What the best raw GEMM gets from T threads on a step's own dots: the same GEMMs (m x k x n, as
// many times as the step runs them, from the compiled plan) on the fastest raw kernel at each
// thread count (bench/engine/raw_gemm.h). Its speed-up over one thread is what the library itself
// gets from this machine's cores at these sizes, the bound to read the engine's dot speed-up
// against: a small GEMM split over two cores may not halve on a virtual machine whoever splits it.
// Bench only; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/engine/raw_gemm.h"
#include "engine/frontend/compiler.h"

namespace tpuemu::bench {

class RawCeiling {
 public:
  // The plan's dots (OpKind::kDot), by GEMM shape, with how many GEMMs of it a step runs.
  explicit RawCeiling(const engine::CompiledProgram& program);

  bool empty() const { return count_.empty(); }
  // Seconds the step's dots take on the fastest raw kernel at `threads`: per shape the best of
  // `reps` calls (after a warm-up), times its count; `kernel` gets the kernels used, joined.
  double Seconds(int threads, int reps, std::string* kernel);

 private:
  struct Key {
    int64_t m, k, n;
    friend auto operator<=>(const Key&, const Key&) = default;
  };
  std::map<Key, int64_t> count_;
  std::map<Key, std::unique_ptr<RawGemm>> gemms_;  // made on first use
};

}  // namespace tpuemu::bench
