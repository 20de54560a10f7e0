// Run-time ISA dispatch for the engine's Eigen-based kernels (one portable binary).
//
// The files that must be vectorised for the CPU at hand by Eigen (gemm_eigen_isa.cpp)
// are compiled once per Isa below, each into its own namespace (see engine/CMakeLists.txt:
// TPUEMU_ISA names the variant, and Eigen's namespace is renamed per variant so that the three
// copies of its templates never merge at link time). HostIsa() picks the best variant the CPU
// and OS support, once.
// Thread-safe: HostIsa computes its answer once (a function-local static).
#pragma once

namespace tpuemu::engine {

enum class Isa {
  kBaseline,  // x86-64 SSE2 (or whatever the compiler's default target is off x86)
  kAvx2,      // AVX2 (+FMA in the GEMM variant)
  kAvx512,    // AVX-512 F/BW/DQ/VL (+FMA in the GEMM variant)
};

// The CPU and OS can run code of this variant.
bool IsaSupported(Isa isa);
// The best supported variant, capped by the environment variable TPUEMU_ISA (baseline | avx2;
// read once).
Isa HostIsa();
// "baseline", "avx2", "avx512".
const char* IsaName(Isa isa);

}  // namespace tpuemu::engine
