// StableHLO types and dense literals of the printer (printer.h): element type names as the
// front end reads them (parser_attr.cpp ElementType) and constants that read back bit for bit
// (lower_attrs.cpp DenseValue).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/hlo/array.h"
#include "engine/stablehlo/printer.h"
#include "engine/stablehlo/printer_internal.h"

namespace tpuemu::engine::stablehlo {

using hlo::Instruction;
using hlo::PrimitiveType;
using hlo::Shape;

Result<std::string> TypeText(const Shape& shape) {
  if (shape.IsTuple()) {
    std::string s = "tuple<";
    for (size_t k = 0; k < shape.tuple.size(); ++k) {
      Result<std::string> t = TypeText(shape.tuple[k]);
      if (!t.ok()) return t.status();
      s += (k ? ", " : "") + *t;
    }
    return s + ">";
  }
  if (shape.type == PrimitiveType::kToken) return std::string("!stablehlo.token");
  std::string element;
  switch (shape.type) {
    case PrimitiveType::kPred:
      element = "i1";
      break;
    case PrimitiveType::kC64:
      element = "complex<f32>";
      break;
    case PrimitiveType::kC128:
      element = "complex<f64>";
      break;
    case PrimitiveType::kF8E3M4:
      element = "f8E3M4";
      break;
    case PrimitiveType::kF8E4M3:
      element = "f8E4M3";
      break;
    case PrimitiveType::kF8E4M3FN:
      element = "f8E4M3FN";
      break;
    case PrimitiveType::kF8E4M3B11FNUZ:
      element = "f8E4M3B11FNUZ";
      break;
    case PrimitiveType::kF8E4M3FNUZ:
      element = "f8E4M3FNUZ";
      break;
    case PrimitiveType::kF8E5M2:
      element = "f8E5M2";
      break;
    case PrimitiveType::kF8E5M2FNUZ:
      element = "f8E5M2FNUZ";
      break;
    case PrimitiveType::kF8E8M0FNU:
      element = "f8E8M0FNU";
      break;
    case PrimitiveType::kF4E2M1FN:
      element = "f4E2M1FN";
      break;
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      element = std::string(hlo::PrimitiveTypeName(shape.type));
      break;
    default: {
      const std::string_view name = hlo::PrimitiveTypeName(shape.type);
      const int bits = hlo::BitWidth(shape.type);
      if (hlo::IsInteger(shape.type) && bits >= 2) {
        element = (hlo::IsSignedInt(shape.type) ? "i" : "ui") + std::to_string(bits);
        break;
      }
      return Status::InvalidArgument("element type " + std::string(name) +
                                     " has no StableHLO name");
    }
  }
  std::string s = "tensor<";
  for (int64_t d : shape.dims) s += std::to_string(d) + "x";
  return s + element + ">";
}

namespace internal {
namespace {

// One element of array `a` as dense text: decimal, true/false, or hex bits for inf and NaN.
std::string ElementText(const hlo::Array& a, int64_t k) {
  if (a.floating()) {
    const float x = a.f[static_cast<size_t>(k)];
    if (std::isfinite(x)) return FloatText(x);
    char buf[24];
    if (a.type == PrimitiveType::kF32) {
      uint32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      std::snprintf(buf, sizeof buf, "0x%08X", bits);
    } else {
      const uint16_t bits =
          a.type == PrimitiveType::kBF16 ? hlo::F32ToBf16Bits(x) : hlo::F32ToF16Bits(x);
      std::snprintf(buf, sizeof buf, "0x%04X", bits);
    }
    return buf;
  }
  const int64_t v = a.i[static_cast<size_t>(k)];
  if (a.type == PrimitiveType::kPred) return v != 0 ? "true" : "false";
  if (hlo::IsUnsignedInt(a.type)) return std::to_string(static_cast<uint64_t>(v));
  return std::to_string(v);
}

bool SameElement(const hlo::Array& a, int64_t x, int64_t y) {
  if (a.floating()) {
    return std::memcmp(&a.f[static_cast<size_t>(x)], &a.f[static_cast<size_t>(y)], sizeof(float)) ==
           0;
  }
  return a.i[static_cast<size_t>(x)] == a.i[static_cast<size_t>(y)];
}

// The elements as the little-endian bytes of their type (one byte per pred).
std::string HexBlob(const hlo::Array& a) {
  const int bytes = a.type == PrimitiveType::kPred ? 1 : hlo::BitWidth(a.type) / 8;
  static const char kDigits[] = "0123456789ABCDEF";
  std::string s = "\"0x";
  s.reserve(3 + static_cast<size_t>(a.size() * bytes * 2));
  for (int64_t k = 0; k < a.size(); ++k) {
    uint64_t bits = 0;
    if (a.type == PrimitiveType::kF32) {
      uint32_t b;
      std::memcpy(&b, &a.f[static_cast<size_t>(k)], sizeof b);
      bits = b;
    } else if (a.floating()) {
      const float x = a.f[static_cast<size_t>(k)];
      bits = a.type == PrimitiveType::kBF16 ? hlo::F32ToBf16Bits(x) : hlo::F32ToF16Bits(x);
    } else {
      bits = static_cast<uint64_t>(a.i[static_cast<size_t>(k)]);
    }
    for (int b = 0; b < bytes; ++b) {
      const auto byte = static_cast<unsigned>((bits >> (8 * b)) & 0xFF);
      s += kDigits[byte >> 4];
      s += kDigits[byte & 15];
    }
  }
  return s + "\"";
}

// [[1, 2], [3, 4]] from element `at` on, over dims[d:].
void NestedList(const hlo::Array& a, size_t d, int64_t& at, std::string& out) {
  if (d == a.dims.size()) {
    out += ElementText(a, at++);
    return;
  }
  out += '[';
  for (int64_t k = 0; k < a.dims[d]; ++k) {
    if (k) out += ", ";
    NestedList(a, d + 1, at, out);
  }
  out += ']';
}

constexpr int64_t kMaxListedElements = 256;
}  // namespace

// A float that reads back as the same f32 (the shortest of 6 to 9 significant digits that
// does), always with a '.' or exponent so that it lexes as a float.
std::string FloatText(float x) {
  char buf[40];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
    if (std::strtof(buf, nullptr) == x) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

Result<std::string> DenseText(const Instruction& inst) {
  if (!inst.shape.IsArray()) {
    return Status::InvalidArgument(inst.Describe() + ": a tuple constant has no StableHLO form");
  }
  if (!inst.literal) {
    return Status::InvalidArgument(inst.Describe() +
                                   ": an elided constant ({...}) has no values to print");
  }
  if (!hlo::IsEvaluable(inst.shape.type)) {
    // The parsers keep no values for these types (printer.h): a zero of the type.
    if (hlo::IsComplex(inst.shape.type)) return std::string("dense<(0.0, 0.0)>");
    return std::string(hlo::IsFloating(inst.shape.type) ? "dense<0.0>" : "dense<0>");
  }
  if (inst.literal->is_tuple || !inst.literal->array) {
    return Status::InvalidArgument(inst.Describe() + ": the constant's value is not an array");
  }
  const hlo::Array& a = *inst.literal->array;
  const int64_t n = a.size();
  if (n == 0) return std::string("dense<>");
  bool splat = true;
  for (int64_t k = 1; k < n && splat; ++k) splat = SameElement(a, 0, k);
  if (splat) return "dense<" + ElementText(a, 0) + ">";
  if (n > kMaxListedElements) return "dense<" + HexBlob(a) + ">";
  std::string list;
  int64_t at = 0;
  NestedList(a, 0, at, list);
  return "dense<" + list + ">";
}

}  // namespace internal
}  // namespace tpuemu::engine::stablehlo
