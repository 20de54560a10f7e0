// TPU numerics: bfloat16 conversions, the matmul precision levels and the bf16 operand splits.
//
// Source for every rule here: docs/hardware-model.md §5 (XLA's
// dot_algorithm_rewriter.cc for the splits, Google's bfloat16 page for the rounding).
//
// - f32 -> bf16 (RoundToBf16*) is round-to-nearest-even; values past the bf16 range become ±inf,
//   a NaN stays a (quiet) NaN with its sign.
// - bf16 subnormals are FLUSHED TO ZERO (keeping the sign): an f32 input whose exponent field is
//   0 converts to ±0. This matches x86's VCVTNEPS2BF16 / VDPBF16PS (DAZ + FTZ), so the Eigen and
//   the oneDNN paths of engine/kernels/gemm.h agree; real TPUs are assumed to do the same (the
//   reference leaves the subnormal case open).
// - TruncToBf16 clears the low 16 bits, exactly as XLA's split does (a NaN whose payload sits
//   only in the low bits therefore truncates to inf; quiet NaNs stay NaN).
//
// Everything here is a pure function: thread-safe, no state.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace tpuemu::engine {

// The bit pattern of a bfloat16 value: 1 sign, 8 exponent, 7 mantissa bits.
using Bf16Bits = std::uint16_t;

// f32 -> bf16 bits: round to nearest even, overflow to inf, NaN kept, subnormals flushed.
inline Bf16Bits F32ToBf16Bits(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<Bf16Bits>((u >> 16) | 0x0040u);  // quiet the NaN, keep sign and payload
  }
  if ((u & 0x7f800000u) == 0) {
    return static_cast<Bf16Bits>((u >> 16) & 0x8000u);  // zero or subnormal -> signed zero
  }
  // Adding 0x7fff (+1 when the kept lsb is odd) carries into bit 16 exactly when RNE rounds up;
  // a carry out of the largest finite exponent lands on the inf pattern, as IEEE requires.
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<Bf16Bits>((u + rounding) >> 16);
}

// bf16 bits -> f32: exact.
inline float Bf16BitsToF32(Bf16Bits b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// x rounded to the nearest bf16 (RNE, FTZ), returned as the f32 holding that bf16 value.
inline float RoundToBf16(float x) { return Bf16BitsToF32(F32ToBf16Bits(x)); }

// XLA's trunc(): bitcast_f32(bitcast_u32(x) & 0xFFFF0000). No subnormal flush, no NaN fix-up.
inline float TruncToBf16(float x) {
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & 0xffff0000u);
}

// An already bf16-representable value with bf16 subnormals flushed to signed zero.
inline float FlushBf16Subnormal(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  return (u & 0x7f800000u) == 0 ? std::bit_cast<float>(u & 0x80000000u) : x;
}

// nan_to_zero(r) = (inf >= |r|) ? r : 0: only NaN becomes 0, ±inf is kept.
inline float NanToZero(float r) { return r != r ? 0.0f : r; }

// XLA's Split2: hi = trunc(x), lo = bf16_rne(x - hi). Each part is a bf16 value held in an f32.
struct Split2Parts {
  float hi;
  float lo;
};
inline Split2Parts Split2(float x) {
  const float hi = TruncToBf16(x);
  return {FlushBf16Subnormal(hi), RoundToBf16(x - hi)};
}

// XLA's Split3: hi = trunc(x), m = x - hi, mid = trunc(m), lo = bf16_rne(m - mid).
// For normal x far from the bf16 range limits, hi + mid + lo == x exactly (8 + 8 + 8 bits).
struct Split3Parts {
  float hi;
  float mid;
  float lo;
};
inline Split3Parts Split3(float x) {
  const float hi = TruncToBf16(x);
  const float m = x - hi;
  const float mid = TruncToBf16(m);
  return {FlushBf16Subnormal(hi), FlushBf16Subnormal(mid), RoundToBf16(m - mid)};
}

// Bulk helpers over n contiguous values (the GEMM paths' operand preparation).
void RoundToBf16(const float* x, float* out, std::size_t n);
void RoundToBf16Bits(const float* x, Bf16Bits* out, std::size_t n);
// Split2/Split3 of every element into separate planes. float planes hold bf16 values (Eigen
// path); Bf16Bits planes hold the same values as bf16 (oneDNN path).
void Split2(const float* x, float* hi, float* lo, std::size_t n);
void Split2(const float* x, Bf16Bits* hi, Bf16Bits* lo, std::size_t n);
void Split3(const float* x, float* hi, float* mid, float* lo, std::size_t n);
void Split3(const float* x, Bf16Bits* hi, Bf16Bits* mid, Bf16Bits* lo, std::size_t n);
// x[i] = NanToZero(x[i]) for n values.
void NanToZeroInPlace(float* x, std::size_t n);

// jax.lax.Precision levels on TPU, plus plain f32 (no MXU emulation, e.g. matrix-vector products
// which run in full f32 on TPU — jax#16349).
enum class Precision { kDefault, kHigh, kHighest, kF32 };

// Accepts the JAX / XLA spellings, case-insensitive: "default", "fastest", "bfloat16" ->
// kDefault; "high", "bfloat16_3x", "tensorfloat32" -> kHigh; "highest", "float32" -> kHighest;
// "f32" -> kF32. Anything else: kInvalidArgument naming the value and the accepted ones.
Result<Precision> ParsePrecision(std::string_view name);
// "DEFAULT", "HIGH", "HIGHEST", "F32" (the jax.lax.Precision member names).
std::string_view PrecisionName(Precision precision);
// bf16 MXU passes a matmul at this precision costs on TPU: 1, 3, 6, and 6 for f32 (which XLA
// lowers to the same six passes as HIGHEST when it reaches the MXU).
int MxuPasses(Precision precision);

}  // namespace tpuemu::engine
