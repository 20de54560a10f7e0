// The kernels compiled once per ISA (engine/kernels/isa.h), one namespace per variant:
// isa_baseline, isa_avx2, isa_avx512. Internal to the engine: callers use engine/kernels/gemm.h,
// which dispatches on HostIsa(). GemmPass is eigen_gemm::Pass of engine/kernels/gemm_pass.h for one
// ISA; it runs on the calling thread only and is stateless.
#pragma once

#include "engine/kernels/gemm_pass.h"

#define TPUEMU_DECLARE_ISA_KERNELS(ns) \
  namespace tpuemu::engine::ns {       \
  void GemmPass(const PassArgs& args); \
  }

TPUEMU_DECLARE_ISA_KERNELS(isa_baseline)
TPUEMU_DECLARE_ISA_KERNELS(isa_avx2)
TPUEMU_DECLARE_ISA_KERNELS(isa_avx512)

#undef TPUEMU_DECLARE_ISA_KERNELS
