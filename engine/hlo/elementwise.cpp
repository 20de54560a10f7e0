#include "engine/hlo/elementwise.h"

#include <bit>
#include <cmath>
#include <limits>

#include "engine/vector_clones.h"
#include "engine/vector_math.h"

namespace tpuemu::engine::hlo {
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

// Floats as integers in total order: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int32_t TotalOrderKey(float f) {
  const auto bits = std::bit_cast<int32_t>(f);
  return bits < 0 ? static_cast<int32_t>(bits ^ 0x7fffffff) : bits;
}

float UnaryFloat(Opcode op, float x) {
  switch (op) {
    case Opcode::kAbs:
      return std::fabs(x);
    case Opcode::kAcos:
      return std::acos(x);
    case Opcode::kAcosh:
      return std::acosh(x);
    case Opcode::kAsin:
      return std::asin(x);
    case Opcode::kAsinh:
      return std::asinh(x);
    case Opcode::kAtan:
      return std::atan(x);
    case Opcode::kAtanh:
      return std::atanh(x);
    case Opcode::kCbrt:
      return std::cbrt(x);
    case Opcode::kCeil:
      return std::ceil(x);
    case Opcode::kCos:
      return std::cos(x);
    case Opcode::kCosh:
      return std::cosh(x);
    case Opcode::kErf:
      return std::erf(x);
    case Opcode::kExp:
      return ExpOne(x);
    case Opcode::kExpm1:
      return std::expm1(x);
    case Opcode::kFloor:
      return std::floor(x);
    case Opcode::kLog:
      return std::log(x);
    case Opcode::kLog1p:
      return std::log1p(x);
    case Opcode::kLogistic:
      return 1.0f / (1.0f + ExpOne(-x));
    case Opcode::kNegate:
      return -x;
    case Opcode::kRoundNearestAfz:
      return std::round(x);
    case Opcode::kRoundNearestEven:
      return std::nearbyint(x);
    case Opcode::kRsqrt:
      return 1.0f / std::sqrt(x);
    case Opcode::kSign:
      return x > 0 ? 1.0f : (x < 0 ? -1.0f : x);
    case Opcode::kSin:
      return std::sin(x);
    case Opcode::kSinh:
      return std::sinh(x);
    case Opcode::kSqrt:
      return std::sqrt(x);
    case Opcode::kTan:
      return std::tan(x);
    case Opcode::kTanh:
      return TanhOne(x);
    default:
      return x;
  }
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

float BinaryFloat(Opcode op, float a, float b) {
  switch (op) {
    case Opcode::kAdd:
      return a + b;
    case Opcode::kSubtract:
      return a - b;
    case Opcode::kMultiply:
      return a * b;
    case Opcode::kDivide:
      return a / b;
    case Opcode::kMaximum:
      return std::isnan(a) || std::isnan(b) ? std::nanf("") : std::max(a, b);
    case Opcode::kMinimum:
      return std::isnan(a) || std::isnan(b) ? std::nanf("") : std::min(a, b);
    case Opcode::kPower:
      return std::pow(a, b);
    case Opcode::kRemainder:
      return std::fmod(a, b);
    case Opcode::kAtan2:
      return std::atan2(a, b);
    default:
      return a;
  }
}

// f32 -> f32 arithmetic with the opcode's switch outside the loop, so the loop vectorises; the
// same value per element as BinaryFloat. False for an opcode it does not cover.
template <typename F>
void MapEach(const float* a, const float* b, float* o, int64_t begin, int64_t end, F f) {
  for (int64_t k = begin; k < end; ++k) o[k] = f(a[k], b[k]);
}
TPUEMU_VECTOR_CLONES bool MapF32(Opcode op, const float* a, const float* b, float* o, int64_t begin,
                                 int64_t end) {
  switch (op) {
    case Opcode::kAdd:
      MapEach(a, b, o, begin, end, [](float x, float y) { return x + y; });
      return true;
    case Opcode::kSubtract:
      MapEach(a, b, o, begin, end, [](float x, float y) { return x - y; });
      return true;
    case Opcode::kMultiply:
      MapEach(a, b, o, begin, end, [](float x, float y) { return x * y; });
      return true;
    case Opcode::kDivide:
      MapEach(a, b, o, begin, end, [](float x, float y) { return x / y; });
      return true;
    case Opcode::kMaximum:
      MapEach(a, b, o, begin, end,
              [](float x, float y) { return BinaryFloat(Opcode::kMaximum, x, y); });
      return true;
    case Opcode::kMinimum:
      MapEach(a, b, o, begin, end,
              [](float x, float y) { return BinaryFloat(Opcode::kMinimum, x, y); });
      return true;
    default:
      return false;
  }
}

template <typename T>
bool Ordered(Direction d, T a, T b) {
  switch (d) {
    case Direction::kEq:
      return a == b;
    case Direction::kNe:
      return a != b;
    case Direction::kLt:
      return a < b;
    case Direction::kLe:
      return a <= b;
    case Direction::kGt:
      return a > b;
    case Direction::kGe:
      return a >= b;
  }
  return false;
}

// out[k] = a[k] <direction> b[k] (0/1) over float arrays, IEEE order (every compare type but
// TOTALORDER), the direction's switch outside the loop.
template <typename T>
void CompareEach(Direction d, const float* a, const float* b, T* out, int64_t begin, int64_t end) {
  switch (d) {
    case Direction::kEq:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] == b[k];
      return;
    case Direction::kNe:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] != b[k];
      return;
    case Direction::kLt:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] < b[k];
      return;
    case Direction::kLe:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] <= b[k];
      return;
    case Direction::kGt:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] > b[k];
      return;
    case Direction::kGe:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] >= b[k];
      return;
  }
}

TPUEMU_VECTOR_CLONES void CompareToInts(Direction d, const float* a, const float* b, int64_t* out,
                                        int64_t begin, int64_t end) {
  CompareEach(d, a, b, out, begin, end);
}
TPUEMU_VECTOR_CLONES void CompareToFloats(Direction d, const float* a, const float* b, float* out,
                                          int64_t n) {
  CompareEach(d, a, b, out, 0, n);
}

// f32 unary maps: the common ones with the opcode's switch outside the loop (so it vectorises),
// the rest through UnaryFloat; the same value per element either way.
TPUEMU_VECTOR_CLONES void UnaryF32(Opcode op, const float* x, float* o, int64_t begin,
                                   int64_t end) {
  switch (op) {
    case Opcode::kNegate:
      for (int64_t k = begin; k < end; ++k) o[k] = -x[k];
      return;
    case Opcode::kAbs:
      for (int64_t k = begin; k < end; ++k) o[k] = std::fabs(x[k]);
      return;
    case Opcode::kSqrt:
      for (int64_t k = begin; k < end; ++k) o[k] = std::sqrt(x[k]);
      return;
    default:
      for (int64_t k = begin; k < end; ++k) o[k] = UnaryFloat(op, x[k]);
      return;
  }
}

// Mask (0 or not) picks on_true or on_false through a bit mask: no branch for data to mispredict.
template <typename M>
void SelectEach(const M* mask, const float* t, const float* f, float* o, int64_t begin,
                int64_t end) {
  for (int64_t k = begin; k < end; ++k) {
    const uint32_t bits = 0u - static_cast<uint32_t>(mask[k] != 0);
    o[k] = std::bit_cast<float>((std::bit_cast<uint32_t>(t[k]) & bits) |
                                (std::bit_cast<uint32_t>(f[k]) & ~bits));
  }
}
TPUEMU_VECTOR_CLONES void SelectByInts(const int64_t* mask, const float* t, const float* f,
                                       float* o, int64_t begin, int64_t end) {
  SelectEach(mask, t, f, o, begin, end);
}

// out[r] = fold of row r (len elements from init, in order) for r < rows. Eight rows at a time:
// each row's fold is a chain of dependent ops (a NaN-aware max is several), so eight chains side
// by side keep the core busy without changing any row's order.
template <typename F>
void FoldRowsEach(const float* x, int64_t rows, int64_t len, float init, float* out, F f) {
  constexpr int64_t kChains = 8;
  int64_t r = 0;
  for (; r + kChains <= rows; r += kChains) {
    float acc[kChains];
    for (int64_t c = 0; c < kChains; ++c) acc[c] = init;
    const float* row = x + r * len;
    for (int64_t k = 0; k < len; ++k) {
      for (int64_t c = 0; c < kChains; ++c) acc[c] = f(acc[c], row[c * len + k]);
    }
    for (int64_t c = 0; c < kChains; ++c) out[r + c] = acc[c];
  }
  for (; r < rows; ++r) {
    float v = init;
    for (int64_t k = 0; k < len; ++k) v = f(v, x[r * len + k]);
    out[r] = v;
  }
}

}  // namespace

bool FoldRowsF32(Opcode op, const float* x, int64_t rows, int64_t len, float init, float* out) {
  switch (op) {
    case Opcode::kAdd:
      FoldRowsEach(x, rows, len, init, out, [](float v, float e) { return v + e; });
      return true;
    case Opcode::kMultiply:
      FoldRowsEach(x, rows, len, init, out, [](float v, float e) { return v * e; });
      return true;
    case Opcode::kMaximum:
      FoldRowsEach(x, rows, len, init, out,
                   [](float v, float e) { return BinaryFloat(Opcode::kMaximum, v, e); });
      return true;
    case Opcode::kMinimum:
      FoldRowsEach(x, rows, len, init, out,
                   [](float v, float e) { return BinaryFloat(Opcode::kMinimum, v, e); });
      return true;
    default:
      return false;
  }
}

void MapBlockF32(const ElementwiseOp& op, const float* a, const float* b, float* o, int64_t n) {
  if (op.opcode == Opcode::kCompare) {
    CompareToFloats(op.direction, a, b, o, n);
  } else if (op.opcode == Opcode::kExp) {
    ExpArray(a, o, n);
  } else if (op.opcode == Opcode::kTanh) {
    TanhArray(a, o, n);
  } else if (IsElementwiseUnary(op.opcode)) {
    UnaryF32(op.opcode, a, o, 0, n);
  } else if (!MapF32(op.opcode, a, b, o, 0, n)) {
    for (int64_t k = 0; k < n; ++k) o[k] = BinaryFloat(op.opcode, a[k], b[k]);
  }
}

void SelectBlockF32(const float* mask, const float* on_true, const float* on_false, float* o,
                    int64_t n) {
  SelectEach(mask, on_true, on_false, o, 0, n);
}

bool AccumulateF32(Opcode op, float* acc, const float* x, int64_t n) {
  if (op != Opcode::kAdd && op != Opcode::kMultiply && op != Opcode::kMaximum &&
      op != Opcode::kMinimum) {
    return false;
  }
  return MapF32(op, acc, x, acc, 0, n);
}

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

Array ApplyUnary(const ElementwiseOp& op, const Array& x, const ParallelContext& parallel,
                 Array* donor) {
  const int64_t n = x.size();
  const bool floats = x.floating() && IsFloating(op.out_type);
  const bool vector_math = floats && (op.opcode == Opcode::kExp || op.opcode == Opcode::kTanh);
  const bool convert = floats && op.opcode == Opcode::kConvert;
  const bool float_map =
      convert || (floats && IsElementwiseUnary(op.opcode) && op.opcode != Opcode::kIsFinite);
  if (!vector_math && !float_map) {
    Array out = Array::Uninitialized(op.out_type, x.dims);
    for (int64_t k = 0; k < n; ++k) SetScalar(out, k, ApplyUnary(op, GetScalar(x, k)));
    return out;
  }
  const float* in = x.f.data();  // taken first: the donor may be x
  Array out = Array::Uninitialized(op.out_type, x.dims, donor);
  float* o = out.f.data();
  // exp and tanh over whole arrays: the vectorised loops, the same bits as one element at a time.
  if (vector_math) {
    ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      (op.opcode == Opcode::kExp ? ExpArray : TanhArray)(in + begin, o + begin, end - begin);
      if (op.out_type != PrimitiveType::kF32) {
        for (int64_t k = begin; k < end; ++k) o[k] = RoundToType(op.out_type, o[k]);
      }
    });
    return out;
  }
  // The common float maps (and float-to-float converts) skip the Scalar round trip.
  ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    if (convert) {
      for (int64_t k = begin; k < end; ++k) o[k] = RoundToType(op.out_type, in[k]);
      return;
    }
    if (op.out_type == PrimitiveType::kF32) {
      UnaryF32(op.opcode, in, o, begin, end);
      return;
    }
    for (int64_t k = begin; k < end; ++k) {
      o[k] = RoundToType(op.out_type, UnaryFloat(op.opcode, in[k]));
    }
  });
  return out;
}

Array ApplyBinary(const ElementwiseOp& op, const Array& a, const Array& b,
                  const ParallelContext& parallel, Array* donor) {
  const PrimitiveType out_type = op.opcode == Opcode::kCompare ? PrimitiveType::kPred : op.out_type;
  const int64_t n = a.size();
  if (a.floating() && IsFloating(out_type)) {
    const float* pa = a.f.data();  // taken first: the donor may be a or b
    const float* pb = b.f.data();
    Array out = Array::Uninitialized(out_type, a.dims, donor);
    float* o = out.f.data();
    ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      if (op.out_type == PrimitiveType::kF32 && MapF32(op.opcode, pa, pb, o, begin, end)) return;
      for (int64_t k = begin; k < end; ++k) {
        o[k] = RoundToType(op.out_type, BinaryFloat(op.opcode, pa[k], pb[k]));
      }
    });
    return out;
  }
  if (op.opcode == Opcode::kCompare && a.floating() &&
      op.compare_type != CompareType::kTotalOrder) {
    const float* pa = a.f.data();
    const float* pb = b.f.data();
    Array out = Array::Uninitialized(out_type, a.dims);
    int64_t* o = out.i.data();
    ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      CompareToInts(op.direction, pa, pb, o, begin, end);
    });
    return out;
  }
  Array out = Array::Uninitialized(out_type, a.dims);
  for (int64_t k = 0; k < n; ++k) {
    SetScalar(out, k, ApplyBinary(op, GetScalar(a, k), GetScalar(b, k)));
  }
  return out;
}

Array Select(const Array& pred, const Array& on_true, const Array& on_false,
             const ParallelContext& parallel, Array* donor) {
  const bool scalar = pred.dims.empty();
  const int64_t n = on_true.size();
  if (on_true.floating() && on_true.type == on_false.type) {
    const int64_t* p = pred.i.data();  // taken first: the donor may be an operand
    const float* t = on_true.f.data();
    const float* f = on_false.f.data();
    Array out = Array::Uninitialized(on_true.type, on_true.dims, donor);
    float* o = out.f.data();
    ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      if (scalar) {
        const float* src = p[0] != 0 ? t : f;
        for (int64_t k = begin; k < end; ++k) o[k] = src[k];
        return;
      }
      SelectByInts(p, t, f, o, begin, end);
    });
    return out;
  }
  Array out = Array::Uninitialized(on_true.type, on_true.dims);
  for (int64_t k = 0; k < n; ++k) {
    const bool p = pred.i[static_cast<size_t>(scalar ? 0 : k)] != 0;
    const Array& src = p ? on_true : on_false;
    Scalar s = GetScalar(src, k);
    if (src.type != out.type) s.f = RoundToType(out.type, s.f);
    SetScalar(out, k, s);
  }
  return out;
}

Array Clamp(const Array& lo, const Array& x, const Array& hi, PrimitiveType out_type) {
  Array out = Array::Uninitialized(out_type, x.dims);
  const int64_t n = x.size();
  ElementwiseOp max_op{Opcode::kMaximum, out_type};
  ElementwiseOp min_op{Opcode::kMinimum, out_type};
  for (int64_t k = 0; k < n; ++k) {
    const Scalar l = GetScalar(lo, lo.dims.empty() ? 0 : k);
    const Scalar h = GetScalar(hi, hi.dims.empty() ? 0 : k);
    SetScalar(out, k, ApplyBinary(min_op, ApplyBinary(max_op, GetScalar(x, k), l), h));
  }
  return out;
}

}  // namespace tpuemu::engine::hlo
