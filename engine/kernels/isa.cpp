#include "engine/kernels/isa.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace tpuemu::engine {

bool IsaSupported(Isa isa) {
  if (isa == Isa::kBaseline) return true;
#if defined(__x86_64__) && defined(__GNUC__)
  // __builtin_cpu_supports also checks that the OS saves the wider registers (XGETBV).
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == Isa::kAvx2) return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

Isa HostIsa() {
  static const Isa isa = [] {
    // TPUEMU_ISA=baseline|avx2 caps the choice, e.g. to run a whole binary on the baseline code.
    const char* cap = std::getenv("TPUEMU_ISA");
    Isa limit = Isa::kAvx512;
    if (cap != nullptr && std::strcmp(cap, "baseline") == 0) limit = Isa::kBaseline;
    if (cap != nullptr && std::strcmp(cap, "avx2") == 0) limit = Isa::kAvx2;
    for (Isa candidate : {Isa::kAvx512, Isa::kAvx2}) {
      if (candidate <= limit && IsaSupported(candidate)) return candidate;
    }
    return Isa::kBaseline;
  }();
  return isa;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kBaseline:
      return "baseline";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

}  // namespace tpuemu::engine
