#include "engine/hardware/numerics.h"

#include <cctype>
#include <string>

#include "base/vector_clones.h"

namespace tpuemu::engine {

// The bulk loops are plain element-wise calls of the inline helpers so that the compiler can
// vectorise them (they are branch-free after if-conversion); they run once per operand per
// Matmul, O(m·k + k·n) next to the O(m·n·k) GEMM, yet at N = 1024 a scalar or SSE2 split costs
// ~20% of a oneDNN bf16 pass. So each loop is also compiled for AVX2 and AVX-512
// (base/vector_clones.h): 3-4x faster than the SSE2 baseline here, on any x86-64.
TPUEMU_VECTOR_CLONES void RoundToBf16(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = RoundToBf16(x[i]);
}

TPUEMU_VECTOR_CLONES void RoundToBf16Bits(const float* x, Bf16Bits* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = F32ToBf16Bits(x[i]);
}

TPUEMU_VECTOR_CLONES void Split2(const float* x, float* hi, float* lo, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const Split2Parts p = Split2(x[i]);
    hi[i] = p.hi;
    lo[i] = p.lo;
  }
}

TPUEMU_VECTOR_CLONES void Split2(const float* x, Bf16Bits* hi, Bf16Bits* lo, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const Split2Parts p = Split2(x[i]);
    // The parts are bf16 values already (or NaN/inf), so RNE is an exact re-encoding.
    hi[i] = F32ToBf16Bits(p.hi);
    lo[i] = F32ToBf16Bits(p.lo);
  }
}

TPUEMU_VECTOR_CLONES void Split3(const float* x, float* hi, float* mid, float* lo, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const Split3Parts p = Split3(x[i]);
    hi[i] = p.hi;
    mid[i] = p.mid;
    lo[i] = p.lo;
  }
}

TPUEMU_VECTOR_CLONES void Split3(const float* x, Bf16Bits* hi, Bf16Bits* mid, Bf16Bits* lo,
                                 std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const Split3Parts p = Split3(x[i]);
    hi[i] = F32ToBf16Bits(p.hi);
    mid[i] = F32ToBf16Bits(p.mid);
    lo[i] = F32ToBf16Bits(p.lo);
  }
}

TPUEMU_VECTOR_CLONES void NanToZeroInPlace(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = NanToZero(x[i]);
}

Result<Precision> ParsePrecision(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Aliases from the jax.lax.Precision docstring (reference §4 table).
  if (lower == "default" || lower == "fastest" || lower == "bfloat16") return Precision::kDefault;
  if (lower == "high" || lower == "bfloat16_3x" || lower == "tensorfloat32") {
    return Precision::kHigh;
  }
  if (lower == "highest" || lower == "float32") return Precision::kHighest;
  if (lower == "f32") return Precision::kF32;
  return Status::InvalidArgument(
      "precision '" + std::string(name) +
      "' is not one of default|fastest|bfloat16, high|bfloat16_3x|tensorfloat32, "
      "highest|float32, f32");
}

std::string_view PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kDefault:
      return "DEFAULT";
    case Precision::kHigh:
      return "HIGH";
    case Precision::kHighest:
      return "HIGHEST";
    case Precision::kF32:
      return "F32";
  }
  return "UNKNOWN";
}

int MxuPasses(Precision precision) {
  switch (precision) {
    case Precision::kDefault:
      return 1;
    case Precision::kHigh:
      return 3;
    case Precision::kHighest:
    case Precision::kF32:
      return 6;
  }
  return 1;
}

}  // namespace tpuemu::engine
