// Included FIRST by the files compiled once per ISA (engine/kernels/isa.h): names the variant's
// namespace and renames Eigen's, so that each variant's Eigen templates (same names, different
// code) stay apart at link time instead of being merged into whichever copy the linker meets first.
// TPUEMU_ISA (baseline | avx2 | avx512) comes from engine/CMakeLists.txt.
#pragma once

#ifndef TPUEMU_ISA
#error "compile this file through tpuemu_isa_variants() in engine/CMakeLists.txt"
#endif

#define TPUEMU_ISA_CAT2(a, b) a##b
#define TPUEMU_ISA_CAT(a, b) TPUEMU_ISA_CAT2(a, b)
// Every `Eigen` token (namespace Eigen, Eigen::...) becomes Eigen_<isa> in this file.
#define Eigen TPUEMU_ISA_CAT(Eigen_, TPUEMU_ISA)
#define TPUEMU_ISA_NAMESPACE TPUEMU_ISA_CAT(isa_, TPUEMU_ISA)
// Single-threaded: the engine's pool owns parallelism.
#define EIGEN_DONT_PARALLELIZE
