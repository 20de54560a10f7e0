// Attribute readers and dense literals for the lowering.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "engine/hlo/array.h"
#include "engine/stablehlo/lower_internal.h"

namespace tpuemu::engine::stablehlo::internal {
namespace {

void Flatten(const Attr& a, std::vector<int64_t>& out, bool& ok) {
  switch (a.kind) {
    case Attr::Kind::kInt:
    case Attr::Kind::kBool:
      out.push_back(a.i);
      return;
    case Attr::Kind::kArray:
      for (const Attr& item : a.items) Flatten(item, out, ok);
      return;
    case Attr::Kind::kDense: {
      const DenseLiteral& d = *a.dense;
      const int64_t n =
          a.type.IsArray() ? a.type.ElementCount() : static_cast<int64_t>(d.elements.size());
      if (d.is_blob) {
        ok = false;
        return;
      }
      for (int64_t k = 0; k < n; ++k) {
        const auto& e = d.elements[d.elements.size() == 1 ? 0 : static_cast<size_t>(k)];
        out.push_back(static_cast<int64_t>(e.bits));
      }
      return;
    }
    default:
      ok = false;
  }
}

double BitsToFloat(hlo::PrimitiveType type, uint64_t bits) {
  switch (type) {
    case hlo::PrimitiveType::kBF16:
      return hlo::Bf16BitsToF32(static_cast<uint16_t>(bits));
    case hlo::PrimitiveType::kF16:
      return hlo::F16BitsToF32(static_cast<uint16_t>(bits));
    default: {
      float f;
      const auto b = static_cast<uint32_t>(bits);
      std::memcpy(&f, &b, sizeof f);
      return f;
    }
  }
}

}  // namespace

Result<std::vector<int64_t>> Ints(const Attr& attr) {
  std::vector<int64_t> out;
  bool ok = true;
  Flatten(attr, out, ok);
  if (!ok) return Status::InvalidArgument("expected a list of integers");
  return out;
}

Result<std::vector<int64_t>> IntsOf(const Op& op, std::string_view name, bool required) {
  const Attr* a = op.Find(name);
  if (a == nullptr) {
    if (!required) return std::vector<int64_t>{};
    return Status::InvalidArgument("StableHLO line " + std::to_string(op.line) + ", column " +
                                   std::to_string(op.column) + ": " + op.name + ": needs " +
                                   std::string(name));
  }
  Result<std::vector<int64_t>> v = Ints(*a);
  if (!v.ok()) {
    return Status::InvalidArgument("StableHLO line " + std::to_string(op.line) + ": " + op.name +
                                   ": " + std::string(name) + " must be a list of integers");
  }
  return v;
}

Result<std::vector<int64_t>> SizedInts(const Op& op, std::string_view name, size_t n,
                                       int64_t fill) {
  Result<std::vector<int64_t>> v = IntsOf(op, name, false);
  if (!v.ok()) return v.status();
  if (v->empty()) return std::vector<int64_t>(n, fill);
  if (v->size() != n) {
    return Status::InvalidArgument(op.name + ": " + std::string(name) + " needs " +
                                   std::to_string(n) + " values");
  }
  return v;
}

int64_t IntOf(const Op& op, std::string_view name, int64_t fallback) {
  const Attr* a = op.Find(name);
  if (a == nullptr) return fallback;
  if (a->kind == Attr::Kind::kInt || a->kind == Attr::Kind::kBool) return a->i;
  if (a->kind == Attr::Kind::kFloat) return static_cast<int64_t>(a->f);
  return fallback;
}

std::string WordOf(const Op& op, std::string_view name) {
  const Attr* a = op.Find(name);
  return a == nullptr ? "" : a->text;
}

bool BoolOf(const Op& op, std::string_view name) {
  const Attr* a = op.Find(name);
  if (a == nullptr) return false;
  if (a->kind == Attr::Kind::kUnit) return true;
  return a->i != 0;
}

hlo::DotPrecision PrecisionOf(const Op& op) {
  hlo::DotPrecision out = hlo::DotPrecision::kUnset;
  const Attr* a = op.Find("precision_config");
  if (a == nullptr) return out;
  for (const Attr& p : a->items) {
    hlo::DotPrecision level = hlo::DotPrecision::kDefault;
    if (p.text == "HIGH") level = hlo::DotPrecision::kHigh;
    if (p.text == "HIGHEST") level = hlo::DotPrecision::kHighest;
    if (out == hlo::DotPrecision::kUnset || static_cast<int>(level) > static_cast<int>(out))
      out = level;
  }
  return out;
}

Result<std::shared_ptr<const hlo::Value>> DenseValue(const DenseLiteral& d,
                                                     const hlo::Shape& shape) {
  if (!shape.IsArray()) return Status::InvalidArgument("a dense literal needs a tensor type");
  const hlo::PrimitiveType type = shape.type;
  const int64_t n = shape.ElementCount();
  const int width_bits = hlo::BitWidth(type);
  const int64_t bytes = type == hlo::PrimitiveType::kPred ? 1 : std::max(1, width_bits / 8);
  if (d.is_blob) {
    const auto size = static_cast<int64_t>(d.hex_blob.size());
    if (size != n * bytes && size != bytes) {
      return Status::InvalidArgument("dense hex literal has " + std::to_string(size) + " bytes; " +
                                     shape.ToString() + " needs " + std::to_string(n * bytes));
    }
  } else if (!d.elements.empty()) {
    const int64_t per = d.complex ? 2 : 1;
    const auto have = static_cast<int64_t>(d.elements.size());
    if (have != per && have != n * per) {
      return Status::InvalidArgument("dense literal has " + std::to_string(have / per) +
                                     " elements; " + shape.ToString() + " has " +
                                     std::to_string(n));
    }
    if (d.complex != hlo::IsComplex(type)) {
      return Status::InvalidArgument(
          std::string("dense literal ") +
          (d.complex ? "has complex pairs for " : "needs (re, im) pairs for ") + shape.ToString());
    }
  } else if (n != 0) {
    return Status::InvalidArgument("empty dense literal for " + shape.ToString());
  }
  if (!hlo::IsEvaluable(type)) {
    // f64, complex, f8, sub-byte: the syntax is checked, the values are not kept (only priced).
    return std::make_shared<const hlo::Value>(hlo::Value::Tuple({}));
  }
  hlo::Array a = hlo::Array::Zeros(type, shape.dims);
  for (int64_t k = 0; k < n; ++k) {
    if (d.is_blob) {
      const int64_t at = static_cast<int64_t>(d.hex_blob.size()) == bytes ? 0 : k * bytes;
      uint64_t bits = 0;
      for (int64_t b = bytes - 1; b >= 0; --b) {
        bits = (bits << 8) | static_cast<unsigned char>(d.hex_blob[static_cast<size_t>(at + b)]);
      }
      if (a.floating()) {
        a.f[static_cast<size_t>(k)] = static_cast<float>(BitsToFloat(type, bits));
      } else {
        int64_t v = static_cast<int64_t>(bits);
        if (width_bits < 64 && width_bits > 0 && type != hlo::PrimitiveType::kPred &&
            hlo::IsSignedInt(type) && (bits >> (width_bits - 1)) & 1) {
          v = static_cast<int64_t>(bits | (~uint64_t{0} << width_bits));
        }
        a.i[static_cast<size_t>(k)] = hlo::CanonicalInt(type, v);
      }
      continue;
    }
    const auto& e = d.elements[d.elements.size() == 1 ? 0 : static_cast<size_t>(k)];
    if (a.floating()) {
      float v;
      if (e.is_hex) {
        v = static_cast<float>(BitsToFloat(type, e.bits));
      } else if (type == hlo::PrimitiveType::kF32 && e.is_float && !e.text.empty()) {
        v = std::strtof(std::string(e.text).c_str(), nullptr);
      } else {
        v = static_cast<float>(e.value);
      }
      a.f[static_cast<size_t>(k)] = hlo::RoundToType(type, v);
    } else {
      if (e.is_float)
        return Status::InvalidArgument("a float in the integer literal of " + shape.ToString());
      a.i[static_cast<size_t>(k)] = hlo::CanonicalInt(type, static_cast<int64_t>(e.bits));
    }
  }
  return std::make_shared<const hlo::Value>(hlo::Value::Of(std::move(a)));
}

}  // namespace tpuemu::engine::stablehlo::internal
