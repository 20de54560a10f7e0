// TPUEMU_VECTOR_CLONES: compile a loop function for AVX-512, AVX2 and the x86-64 baseline, the
// loader picking the best clone for the CPU (GCC/Clang target_clones, an ifunc), so the binary
// stays portable and hot elementwise loops still use the wide registers. The clones compute the
// same numbers: the build passes -ffp-contract=off (CMakeLists.txt; GCC would otherwise contract
// a·b + c into an FMA in the clones that have one), and no clone uses a different algorithm.
// Not under ThreadSanitizer: the ifunc resolver runs during relocation, before the TSan runtime
// is up, and its instrumented prologue crashes the process.
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TPUEMU_NO_VECTOR_CLONES
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TPUEMU_NO_VECTOR_CLONES
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TPUEMU_NO_VECTOR_CLONES)
#define TPUEMU_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TPUEMU_VECTOR_CLONES
#endif
