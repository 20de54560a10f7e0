#include "engine/hlo/npy.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace tpuemu::engine::hlo {
namespace {

struct Descr {
  char kind;  // 'b', 'i', 'u', 'f', 'V'
  int bytes;
};

Result<Descr> ParseDescr(std::string_view d, const std::string& what) {
  if (d.size() < 3)
    return Status::InvalidArgument(what + ": unsupported dtype '" + std::string(d) + "'");
  const char order = d[0];
  Descr out{d[1], 0};
  for (char c : d.substr(2)) {
    if (c < '0' || c > '9')
      return Status::InvalidArgument(what + ": unsupported dtype '" + std::string(d) + "'");
    out.bytes = out.bytes * 10 + (c - '0');
  }
  if (order == '>' && out.bytes > 1) {
    return Status::InvalidArgument(what + ": big-endian data ('" + std::string(d) +
                                   "') is not supported; save little-endian arrays");
  }
  const bool ok = (out.kind == 'b' && out.bytes == 1) ||
                  ((out.kind == 'i' || out.kind == 'u') &&
                   (out.bytes == 1 || out.bytes == 2 || out.bytes == 4 || out.bytes == 8)) ||
                  (out.kind == 'f' && (out.bytes == 2 || out.bytes == 4 || out.bytes == 8)) ||
                  (out.kind == 'V' && out.bytes == 2);
  if (!ok) return Status::InvalidArgument(what + ": unsupported dtype '" + std::string(d) + "'");
  return out;
}

// The value after `key` in the header dict: a quoted string, True/False, or a (tuple).
std::string_view Field(std::string_view header, std::string_view key) {
  const size_t k = header.find(key);
  if (k == std::string_view::npos) return {};
  size_t p = header.find(':', k + key.size());
  if (p == std::string_view::npos) return {};
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) return {};
  if (header[p] == '\'' || header[p] == '"') {
    const size_t end = header.find(header[p], p + 1);
    return end == std::string_view::npos ? std::string_view{} : header.substr(p + 1, end - p - 1);
  }
  if (header[p] == '(') {
    const size_t end = header.find(')', p);
    return end == std::string_view::npos ? std::string_view{} : header.substr(p + 1, end - p - 1);
  }
  size_t end = p;
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(p, end - p);
}

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

Result<Array> ReadNpy(std::string_view bytes, const Shape& want, const std::string& what) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6)) {
    return Status::InvalidArgument(what + ": not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Status::InvalidArgument(what + ": truncated .npy header");
    header_len = 0;
    for (int i = 3; i >= 0; --i)
      header_len =
          (header_len << 8) | static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)]);
    start = 12;
  } else {
    return Status::InvalidArgument(what + ": unsupported .npy version " + std::to_string(major));
  }
  if (start + header_len > bytes.size())
    return Status::InvalidArgument(what + ": truncated .npy header");
  const std::string_view header = bytes.substr(start, header_len);
  auto descr = ParseDescr(Field(header, "descr"), what);
  if (!descr.ok()) return descr.status();
  if (Field(header, "fortran_order").starts_with("True")) {
    return Status::InvalidArgument(what +
                                   ": Fortran-order data is not supported "
                                   "(save np.ascontiguousarray(x))");
  }
  std::vector<int64_t> dims;
  std::string_view shape = Field(header, "shape");
  while (!shape.empty()) {
    const size_t comma = shape.find(',');
    std::string_view part = shape.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) {
      int64_t d = 0;
      for (char c : part) {
        if (c < '0' || c > '9' || d > (int64_t{1} << 40)) {
          return Status::InvalidArgument(what + ": bad shape in the .npy header");
        }
        d = d * 10 + (c - '0');
      }
      dims.push_back(d);
    }
    if (comma == std::string_view::npos) break;
    shape.remove_prefix(comma + 1);
  }
  if (dims != want.dims) {
    return Status::InvalidArgument(what + ": the array has shape " +
                                   Shape::Array(want.type, dims).ToString() + ", expected " +
                                   want.ToString());
  }
  const int64_t n = Product(dims);
  const std::string_view data = bytes.substr(start + header_len);
  if (static_cast<int64_t>(data.size()) != n * descr->bytes) {
    return Status::InvalidArgument(what + ": " + std::to_string(data.size()) + " data bytes for " +
                                   std::to_string(n) + " elements of " +
                                   std::to_string(descr->bytes) + " byte(s)");
  }
  const bool float_src = descr->kind == 'f' || descr->kind == 'V';
  if (float_src != IsFloating(want.type) ||
      (descr->kind == 'V' && want.type != PrimitiveType::kBF16)) {
    return Status::InvalidArgument(what + ": a '" + std::string(Field(header, "descr")) +
                                   "' array cannot feed a " +
                                   std::string(PrimitiveTypeName(want.type)) + " parameter");
  }
  Array out = Array::Zeros(want.type, dims);
  for (int64_t k = 0; k < n; ++k) {
    const char* p = data.data() + k * descr->bytes;
    if (float_src) {
      float v = 0;
      if (descr->kind == 'V') v = Bf16BitsToF32(Load<uint16_t>(p));
      if (descr->kind == 'f' && descr->bytes == 2) v = F16BitsToF32(Load<uint16_t>(p));
      if (descr->kind == 'f' && descr->bytes == 4) v = Load<float>(p);
      if (descr->kind == 'f' && descr->bytes == 8) v = static_cast<float>(Load<double>(p));
      out.f[static_cast<size_t>(k)] = RoundToType(want.type, v);
      continue;
    }
    int64_t v = 0;
    switch (descr->bytes) {
      case 1:
        v = descr->kind == 'i' ? Load<int8_t>(p) : Load<uint8_t>(p);
        break;
      case 2:
        v = descr->kind == 'i' ? Load<int16_t>(p) : Load<uint16_t>(p);
        break;
      case 4:
        v = descr->kind == 'i' ? Load<int32_t>(p) : Load<uint32_t>(p);
        break;
      default:
        v = Load<int64_t>(p);
        break;
    }
    const bool big_unsigned = descr->kind == 'u' && descr->bytes == 8 && v < 0;
    const int64_t canonical = CanonicalInt(want.type, v);
    const bool fits = want.type == PrimitiveType::kU64    ? (v >= 0 || descr->kind == 'u')
                      : want.type == PrimitiveType::kPred ? (v == 0 || v == 1)
                                                          : (!big_unsigned && canonical == v);
    if (!fits) {
      return Status::InvalidArgument(what + ": element " + std::to_string(k) + " (" +
                                     std::to_string(v) + ") does not fit " +
                                     std::string(PrimitiveTypeName(want.type)));
    }
    out.i[static_cast<size_t>(k)] = canonical;
  }
  return out;
}

std::string WriteNpy(const Array& a) {
  std::string descr;
  int bytes = 4;
  switch (a.type) {
    case PrimitiveType::kPred:
      descr = "|b1";
      bytes = 1;
      break;
    case PrimitiveType::kS8:
      descr = "|i1";
      bytes = 1;
      break;
    case PrimitiveType::kS16:
      descr = "<i2";
      bytes = 2;
      break;
    case PrimitiveType::kS32:
      descr = "<i4";
      bytes = 4;
      break;
    case PrimitiveType::kS64:
      descr = "<i8";
      bytes = 8;
      break;
    case PrimitiveType::kU8:
      descr = "|u1";
      bytes = 1;
      break;
    case PrimitiveType::kU16:
      descr = "<u2";
      bytes = 2;
      break;
    case PrimitiveType::kU32:
      descr = "<u4";
      bytes = 4;
      break;
    case PrimitiveType::kU64:
      descr = "<u8";
      bytes = 8;
      break;
    case PrimitiveType::kF16:
      descr = "<f2";
      bytes = 2;
      break;
    default:
      descr = "<f4";
      bytes = 4;
      break;
  }
  std::string shape = "(";
  for (size_t i = 0; i < a.dims.size(); ++i) shape += std::to_string(a.dims[i]) + ",";
  if (a.dims.size() > 1) shape.pop_back();
  shape += ")";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary; the header ends with '\n'.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  for (int64_t k = 0, n = a.size(); k < n; ++k) {
    char buf[8];
    if (a.type == PrimitiveType::kF16) {
      const uint16_t h = F32ToF16Bits(a.f[static_cast<size_t>(k)]);
      std::memcpy(buf, &h, 2);
    } else if (a.floating()) {
      std::memcpy(buf, &a.f[static_cast<size_t>(k)], 4);
    } else {
      const int64_t v = a.i[static_cast<size_t>(k)];
      std::memcpy(buf, &v, 8);  // little-endian: the low bytes first
    }
    out.append(buf, static_cast<size_t>(bytes));
  }
  return out;
}

}  // namespace tpuemu::engine::hlo
