#include "engine/hlo/elementwise.h"

#include <bit>
#include <cmath>
#include <limits>

#include "engine/hlo/elementwise_float.h"

namespace tpuemu::engine::hlo {

using internal::BinaryFloat;
using internal::Ordered;
using internal::TotalOrderKey;
using internal::UnaryFloat;

namespace {

int Width(PrimitiveType t) { return t == PrimitiveType::kPred ? 1 : BitWidth(t); }

uint64_t Mask(PrimitiveType t) {
  const int w = Width(t);
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

int64_t MinSigned(PrimitiveType t) {
  const int w = Width(t);
  return w >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (w - 1));
}

// The value of an element of `t` read as the signed integer of the same width.
int64_t SignExtend(PrimitiveType t, int64_t v) {
  const int w = Width(t);
  if (w >= 64) return v;
  const uint64_t u = static_cast<uint64_t>(v) & Mask(t);
  const uint64_t sign = uint64_t{1} << (w - 1);
  return static_cast<int64_t>((u ^ sign) - sign);
}

int64_t UnaryInt(Opcode op, PrimitiveType t, int64_t x) {
  const bool is_unsigned = IsUnsignedInt(t);
  const uint64_t u = static_cast<uint64_t>(x) & Mask(t);
  switch (op) {
    case Opcode::kAbs:
      return is_unsigned || x >= 0 ? x : CanonicalInt(t, static_cast<int64_t>(0 - u));
    case Opcode::kNegate:
      return CanonicalInt(t, static_cast<int64_t>(0 - static_cast<uint64_t>(x)));
    case Opcode::kSign:
      return is_unsigned ? (x != 0) : (x > 0) - (x < 0);
    case Opcode::kNot:
      return t == PrimitiveType::kPred ? !x : CanonicalInt(t, ~x);
    case Opcode::kPopulationCount:
      return std::popcount(u);
    case Opcode::kClz:
      return Width(t) - (64 - std::countl_zero(u));
    default:
      return x;
  }
}

float ReducePrecision(float x, int64_t exponent_bits, int64_t mantissa_bits) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  if (mantissa_bits < 23) {
    const uint32_t last = 1u << (23 - mantissa_bits);
    const uint32_t bias = (last >> 1) - 1 + ((bits & last) >> (23 - mantissa_bits));
    bits = (bits + bias) & ~(last - 1);
  }
  if (exponent_bits < 8) {
    const uint32_t reduced_bias = (1u << (exponent_bits - 1)) - 1;
    const uint32_t max_exp = 127 + reduced_bias;
    const uint32_t min_exp = 127 - reduced_bias;
    const uint32_t exp = bits & 0x7f800000u;
    const uint32_t sign = bits & 0x80000000u;
    if (exp > (max_exp << 23)) {
      bits = sign | 0x7f800000u;
    } else if (exp <= (min_exp << 23)) {
      bits = sign;
    }
  }
  if (std::isnan(x)) return mantissa_bits > 0 ? x : std::bit_cast<float>(bits | 0x7f800000u);
  return std::bit_cast<float>(bits);
}

Scalar Convert(const Scalar& x, PrimitiveType to) {
  Scalar r;
  r.type = to;
  if (IsFloating(to)) {
    if (IsFloating(x.type)) {
      r.f = RoundToType(to, x.f);
    } else if (x.type == PrimitiveType::kU64) {
      r.f = RoundToType(to, static_cast<float>(static_cast<uint64_t>(x.i)));
    } else {
      r.f = RoundToType(to, static_cast<float>(x.i));
    }
  } else if (IsFloating(x.type)) {
    r.i = FloatToIntSaturating(to, x.f);
  } else {
    r.i = to == PrimitiveType::kPred ? (x.i != 0) : CanonicalInt(to, x.i);
  }
  return r;
}

Scalar BitcastConvert(const Scalar& x, PrimitiveType to) {
  uint64_t bits = 0;
  if (x.type == PrimitiveType::kF32) {
    bits = std::bit_cast<uint32_t>(x.f);
  } else if (x.type == PrimitiveType::kBF16) {
    bits = F32ToBf16Bits(x.f);
  } else if (x.type == PrimitiveType::kF16) {
    bits = F32ToF16Bits(x.f);
  } else {
    bits = static_cast<uint64_t>(x.i) & Mask(x.type);
  }
  Scalar r;
  r.type = to;
  if (to == PrimitiveType::kF32) {
    r.f = std::bit_cast<float>(static_cast<uint32_t>(bits));
  } else if (to == PrimitiveType::kBF16) {
    r.f = Bf16BitsToF32(static_cast<uint16_t>(bits));
  } else if (to == PrimitiveType::kF16) {
    r.f = F16BitsToF32(static_cast<uint16_t>(bits));
  } else {
    r.i = CanonicalInt(to, static_cast<int64_t>(bits));
  }
  return r;
}

int64_t IntPower(int64_t base, int64_t exp, PrimitiveType t) {
  if (exp < 0 && !IsUnsignedInt(t)) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp) & Mask(t); e > 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return CanonicalInt(t, static_cast<int64_t>(result));
}

int64_t BinaryInt(Opcode op, PrimitiveType t, int64_t a, int64_t b) {
  const bool is_unsigned = IsUnsignedInt(t);
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  auto wrap = [t](uint64_t v) { return CanonicalInt(t, static_cast<int64_t>(v)); };
  const bool less = is_unsigned ? ua < ub : a < b;
  switch (op) {
    case Opcode::kAdd:
      return wrap(ua + ub);
    case Opcode::kSubtract:
      return wrap(ua - ub);
    case Opcode::kMultiply:
      return wrap(ua * ub);
    case Opcode::kMaximum:
      return less ? b : a;
    case Opcode::kMinimum:
      return less ? a : b;
    case Opcode::kAnd:
      return a & b;
    case Opcode::kOr:
      return a | b;
    case Opcode::kXor:
      return a ^ b;
    case Opcode::kPower:
      return IntPower(a, b, t);
    case Opcode::kDivide:
      if (b == 0) return CanonicalInt(t, -1);
      if (is_unsigned) return wrap(ua / ub);
      if (a == MinSigned(t) && b == -1) return a;
      return a / b;
    case Opcode::kRemainder:
      if (b == 0) return a;
      if (is_unsigned) return wrap(ua % ub);
      if (a == MinSigned(t) && b == -1) return 0;
      return a % b;
    case Opcode::kShiftLeft: {
      const uint64_t n = ub & Mask(t);
      return n >= static_cast<uint64_t>(Width(t)) ? 0 : wrap(ua << n);
    }
    case Opcode::kShiftRightLogical: {
      const uint64_t n = ub & Mask(t);
      return n >= static_cast<uint64_t>(Width(t)) ? 0 : wrap((ua & Mask(t)) >> n);
    }
    case Opcode::kShiftRightArithmetic: {
      const uint64_t n = ub & Mask(t);
      const int64_t s = SignExtend(t, a);
      if (n >= static_cast<uint64_t>(Width(t))) return wrap(static_cast<uint64_t>(s < 0 ? -1 : 0));
      return wrap(static_cast<uint64_t>(s >> n));
    }
    default:
      return a;
  }
}

}  // namespace

Scalar GetScalar(const Array& a, int64_t k) {
  Scalar s;
  s.type = a.type;
  if (a.floating()) {
    s.f = a.f[static_cast<size_t>(k)];
  } else {
    s.i = a.i[static_cast<size_t>(k)];
  }
  return s;
}

void SetScalar(Array& a, int64_t k, const Scalar& s) {
  if (a.floating()) {
    a.f[static_cast<size_t>(k)] = s.f;
  } else {
    a.i[static_cast<size_t>(k)] = s.i;
  }
}

bool Compare(Direction direction, CompareType type, const Scalar& a, const Scalar& b) {
  if (IsFloating(a.type)) {
    if (type == CompareType::kTotalOrder) {
      return Ordered(direction, TotalOrderKey(a.f), TotalOrderKey(b.f));
    }
    return Ordered(direction, a.f, b.f);
  }
  const bool is_unsigned =
      type == CompareType::kUnsigned || (type != CompareType::kSigned && IsUnsignedInt(a.type));
  if (is_unsigned) {
    return Ordered(direction, static_cast<uint64_t>(a.i), static_cast<uint64_t>(b.i));
  }
  return Ordered(direction, a.i, b.i);
}

Scalar ApplyUnary(const ElementwiseOp& op, const Scalar& x) {
  switch (op.opcode) {
    case Opcode::kConvert:
      return Convert(x, op.out_type);
    case Opcode::kBitcastConvert:
      return BitcastConvert(x, op.out_type);
    case Opcode::kReducePrecision:
      return Scalar{
          x.type, RoundToType(x.type, ReducePrecision(x.f, op.exponent_bits, op.mantissa_bits)), 0};
    case Opcode::kIsFinite:
      return Scalar{PrimitiveType::kPred, 0, std::isfinite(x.f) ? 1 : 0};
    default:
      break;
  }
  Scalar r;
  r.type = x.type;
  if (IsFloating(x.type)) {
    r.f = RoundToType(x.type, UnaryFloat(op.opcode, x.f));
  } else {
    r.i = UnaryInt(op.opcode, x.type, x.i);
  }
  return r;
}

Scalar ApplyBinary(const ElementwiseOp& op, const Scalar& a, const Scalar& b) {
  Scalar r;
  if (op.opcode == Opcode::kCompare) {
    r.type = PrimitiveType::kPred;
    r.i = Compare(op.direction, op.compare_type, a, b) ? 1 : 0;
    return r;
  }
  r.type = op.out_type;
  if (IsFloating(a.type)) {
    r.f = RoundToType(op.out_type, BinaryFloat(op.opcode, a.f, b.f));
  } else {
    r.i = BinaryInt(op.opcode, a.type, a.i, b.i);
  }
  return r;
}

ElementwiseOp OpOf(const Instruction& inst) {
  ElementwiseOp op;
  op.opcode = inst.opcode;
  op.out_type = inst.shape.type;
  op.direction = inst.a().direction;
  op.compare_type = inst.a().compare_type;
  op.exponent_bits = inst.a().exponent_bits;
  op.mantissa_bits = inst.a().mantissa_bits;
  return op;
}

}  // namespace tpuemu::engine::hlo
