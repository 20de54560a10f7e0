// Dispatch of eigen_gemm::Pass to the variant compiled for the CPU (engine/kernels/isa.h).
#include "engine/kernels/gemm_pass.h"
#include "engine/kernels/isa_kernels.h"

namespace tpuemu::engine::eigen_gemm {

void Pass(const PassArgs& args, Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      isa_avx512::GemmPass(args);
      return;
    case Isa::kAvx2:
      isa_avx2::GemmPass(args);
      return;
    case Isa::kBaseline:
      isa_baseline::GemmPass(args);
      return;
  }
}

}  // namespace tpuemu::engine::eigen_gemm
