#include "engine/hlo/array.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "base/vector_clones.h"

namespace tpuemu::engine::hlo {

uint16_t F32ToBf16Bits(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

float Bf16BitsToF32(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t F32ToF16Bits(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): the value in units of 2^-24, rounded to nearest even.
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25: rounds to 0
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    // value = mant * 2^(exp - 150), i.e. mant * 2^(exp - 126) units of 2^-24.
    const int shift = 126 - static_cast<int>(abs >> 23);
    const uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits.
  const uint32_t rebased = abs - (112u << 23);
  const uint32_t r = (rebased + 0xfffu + ((rebased >> 13) & 1u)) >> 13;
  return static_cast<uint16_t>(sign | r);
}

float F16BitsToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

float RoundToType(PrimitiveType type, float x) {
  switch (type) {
    case PrimitiveType::kBF16:
      return Bf16BitsToF32(F32ToBf16Bits(x));
    case PrimitiveType::kF16:
      return F16BitsToF32(F32ToF16Bits(x));
    default:
      return x;
  }
}

namespace {

// F32ToBf16Bits then back, without the branch: NaN keeps its sign and payload, made quiet.
TPUEMU_VECTOR_CLONES void RoundToBf16Loop(const float* from, float* to, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const uint32_t u = std::bit_cast<uint32_t>(from[k]);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    const uint32_t nan = (u | 0x00400000u) & 0xffff0000u;
    to[k] = std::bit_cast<float>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

}  // namespace

void RoundToType(PrimitiveType type, const float* from, float* to, int64_t n) {
  if (type == PrimitiveType::kBF16) {
    RoundToBf16Loop(from, to, n);
  } else {
    for (int64_t k = 0; k < n; ++k) to[k] = RoundToType(type, from[k]);
  }
}

int64_t CanonicalInt(PrimitiveType type, int64_t x) {
  switch (type) {
    case PrimitiveType::kPred:
      return x != 0 ? 1 : 0;
    case PrimitiveType::kS8:
      return static_cast<int8_t>(x);
    case PrimitiveType::kS16:
      return static_cast<int16_t>(x);
    case PrimitiveType::kS32:
      return static_cast<int32_t>(x);
    case PrimitiveType::kU8:
      return static_cast<uint8_t>(x);
    case PrimitiveType::kU16:
      return static_cast<uint16_t>(x);
    case PrimitiveType::kU32:
      return static_cast<uint32_t>(x);
    default:
      return x;
  }
}

Array Array::Uninitialized(PrimitiveType type, std::vector<int64_t> dims, Array* donor) {
  Array a;
  a.type = type;
  a.dims = std::move(dims);
  const int64_t n = Product(a.dims);
  if (donor != nullptr && donor->size() == n && donor->floating() == IsFloating(type)) {
    // The buffer moves: pointers a kernel took to the donor's elements stay valid.
    if (IsFloating(type)) {
      a.f = std::move(donor->f);
    } else {
      a.i = std::move(donor->i);
    }
    return a;
  }
  if (IsFloating(type)) {
    a.f.resize(static_cast<size_t>(n));
  } else {
    a.i.resize(static_cast<size_t>(n));
  }
  return a;
}

Array Array::Zeros(PrimitiveType type, std::vector<int64_t> dims) {
  Array a;
  a.type = type;
  a.dims = std::move(dims);
  const int64_t n = Product(a.dims);
  if (IsFloating(type)) {
    a.f.assign(static_cast<size_t>(n), 0.0f);
  } else {
    a.i.assign(static_cast<size_t>(n), 0);
  }
  return a;
}

int64_t Array::size() const { return Product(dims); }

double Array::GetDouble(int64_t k) const {
  if (floating()) return f[static_cast<size_t>(k)];
  const int64_t v = i[static_cast<size_t>(k)];
  if (type == PrimitiveType::kU64) return static_cast<double>(static_cast<uint64_t>(v));
  return static_cast<double>(v);
}

void Array::SetDouble(int64_t k, double v) {
  if (floating()) {
    f[static_cast<size_t>(k)] = RoundToType(type, static_cast<float>(v));
  } else {
    i[static_cast<size_t>(k)] = FloatToIntSaturating(type, v);
  }
}

Shape Value::shape() const {
  if (!is_tuple) return array->shape();
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Value& e : elements) shapes.push_back(e.shape());
  return Shape::Tuple(std::move(shapes));
}

void Value::CollectArrays(std::vector<const Array*>& out) const {
  if (!is_tuple) {
    out.push_back(array.get());
    return;
  }
  for (const Value& e : elements) e.CollectArrays(out);
}

bool Contains(const std::vector<int64_t>& dims, int64_t x) {
  return std::find(dims.begin(), dims.end(), x) != dims.end();
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[static_cast<size_t>(i)] =
        strides[static_cast<size_t>(i) + 1] * dims[static_cast<size_t>(i) + 1];
  }
  return strides;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    const auto k = static_cast<size_t>(i);
    if (++index[k] < dims[k]) return true;
    index[k] = 0;
  }
  return false;
}

int64_t FloatToIntSaturating(PrimitiveType type, double x) {
  if (type == PrimitiveType::kPred) return x != 0.0 ? 1 : 0;
  if (std::isnan(x)) return 0;
  double lo = 0, hi = 0;
  switch (type) {
    case PrimitiveType::kS8:
      lo = -128.0;
      hi = 127.0;
      break;
    case PrimitiveType::kS16:
      lo = -32768.0;
      hi = 32767.0;
      break;
    case PrimitiveType::kS32:
      lo = -2147483648.0;
      hi = 2147483647.0;
      break;
    case PrimitiveType::kU8:
      hi = 255.0;
      break;
    case PrimitiveType::kU16:
      hi = 65535.0;
      break;
    case PrimitiveType::kU32:
      hi = 4294967295.0;
      break;
    case PrimitiveType::kS64:
      if (x <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
      if (x >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
      return static_cast<int64_t>(x);
    case PrimitiveType::kU64:
      if (x <= 0) return 0;
      if (x >= 18446744073709551616.0) return -1;  // all ones
      return static_cast<int64_t>(static_cast<uint64_t>(x));
    default:
      return static_cast<int64_t>(x);
  }
  if (x <= lo) return static_cast<int64_t>(lo);
  if (x >= hi) return static_cast<int64_t>(hi);
  return static_cast<int64_t>(x);
}

}  // namespace tpuemu::engine::hlo
