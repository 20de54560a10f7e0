// Element types of HLO shapes (XLA's PrimitiveType), their text names and sizes.
//
// The parser accepts every element type XLA prints (so any real dump parses and can be priced);
// the evaluator computes only pred, s8..s64, u8..u64, f16, bf16 and f32 (IsEvaluable) and fails
// with a clear error on the rest (f64, complex, the f8/f4/sub-byte types). Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tpuemu::engine::hlo {

enum class PrimitiveType {
  kInvalid,
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kF4E2M1FN,
  kF8E3M4,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E4M3FNUZ,
  kF8E5M2,
  kF8E5M2FNUZ,
  kF8E8M0FNU,
  kToken,
  kOpaque,
  kTuple,  // never spelled in text: a shape in parentheses
};

// "f32", "bf16", "pred", "(tuple)" for kTuple.
std::string_view PrimitiveTypeName(PrimitiveType type);
// The element type named exactly `name` (lower case, as XLA prints it); nullopt otherwise.
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name);

// Bits of one element in HBM (pred is stored as a byte; token/opaque/tuple: 0).
int BitWidth(PrimitiveType type);
// Bytes of `elements` elements, sub-byte types packed.
int64_t ByteSize(PrimitiveType type, int64_t elements);

bool IsFloating(PrimitiveType type);  // every f*, bf16 type (not complex)
bool IsSignedInt(PrimitiveType type);
bool IsUnsignedInt(PrimitiveType type);
inline bool IsInteger(PrimitiveType type) { return IsSignedInt(type) || IsUnsignedInt(type); }
bool IsComplex(PrimitiveType type);
// An array element type (not token, opaque or tuple).
bool IsArrayType(PrimitiveType type);
// The types the evaluator computes with.
bool IsEvaluable(PrimitiveType type);

}  // namespace tpuemu::engine::hlo
