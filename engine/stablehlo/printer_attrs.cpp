// The attribute texts of the printed ops (printer_ops.cpp): integer arrays, strings, chlo names,
// comparison directions, convolution labels, windows, collectives and precision.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "engine/stablehlo/op_table.h"
#include "engine/stablehlo/printer_internal.h"

namespace tpuemu::engine::stablehlo::internal {

using hlo::Opcode;

std::string I64s(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s;
}

// array<i64: 1, 2>
std::string I64Array(const std::vector<int64_t>& v) {
  return v.empty() ? "array<i64>" : "array<i64: " + I64s(v) + ">";
}

// dense<[[a, b], [c, d]]> : tensor<2x2xi64>, rows padded with `fill` to the longest.
std::string I64Matrix(const std::vector<std::vector<int64_t>>& rows, int64_t fill) {
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.size());
  std::string s = "dense<[";
  for (size_t k = 0; k < rows.size(); ++k) {
    std::vector<int64_t> row = rows[k];
    row.resize(width, fill);
    s += (k ? ", [" : "[") + I64s(row) + "]";
  }
  return s + "]> : tensor<" + std::to_string(rows.size()) + "x" + std::to_string(width) + "xi64>";
}

std::string IntAttr(int64_t v, const char* type) { return std::to_string(v) + " : " + type; }

// "text" with '"', '\\' and control characters escaped as MLIR reads them (\XX).
std::string Quoted(const std::string& text) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string s = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || u < 0x20) {
      s += '\\';
      s += kDigits[u >> 4];
      s += kDigits[u & 15];
    } else {
      s += c;
    }
  }
  return s + "\"";
}

std::string_view ChloName(Opcode op) {
  switch (op) {
    case Opcode::kAcos:
      return "acos";
    case Opcode::kAcosh:
      return "acosh";
    case Opcode::kAsin:
      return "asin";
    case Opcode::kAsinh:
      return "asinh";
    case Opcode::kAtan:
      return "atan";
    case Opcode::kAtanh:
      return "atanh";
    case Opcode::kCosh:
      return "cosh";
    case Opcode::kSinh:
      return "sinh";
    case Opcode::kErf:
      return "erf";
    default:
      return {};
  }
}

std::string_view DirectionWord(hlo::Direction d) {
  switch (d) {
    case hlo::Direction::kEq:
      return "EQ";
    case hlo::Direction::kNe:
      return "NE";
    case hlo::Direction::kLt:
      return "LT";
    case hlo::Direction::kLe:
      return "LE";
    case hlo::Direction::kGt:
      return "GT";
    case hlo::Direction::kGe:
      return "GE";
  }
  return "EQ";
}

// [b, 0, 1, f]: letter `a` at position pa, `b` at pb, spatial dimension k at spatial[k].
std::string ConvLabels(char a, int64_t pa, char b, int64_t pb,
                       const std::vector<int64_t>& spatial) {
  std::vector<std::string> labels(spatial.size() + 2, "?");
  auto put = [&](int64_t at, std::string label) {
    if (at >= 0 && static_cast<size_t>(at) < labels.size()) labels[static_cast<size_t>(at)] = label;
  };
  put(pa, std::string(1, a));
  put(pb, std::string(1, b));
  for (size_t k = 0; k < spatial.size(); ++k) put(spatial[k], std::to_string(k));
  return "[" + JoinText(labels) + "]";
}

// Window attributes that differ from their defaults, by the front end's names.
void WindowAttrs(const std::vector<hlo::WindowDim>& w, const char* lhs, const char* rhs,
                 std::vector<std::string>& attrs) {
  std::vector<int64_t> strides, base, dil, rev;
  std::vector<std::vector<int64_t>> pad;
  bool strided = false, padded = false, based = false, dilated = false, reversed = false;
  for (const hlo::WindowDim& d : w) {
    strides.push_back(d.stride);
    base.push_back(d.base_dilation);
    dil.push_back(d.window_dilation);
    rev.push_back(d.reversal ? 1 : 0);
    pad.push_back({d.pad_low, d.pad_high});
    strided |= d.stride != 1;
    padded |= d.pad_low != 0 || d.pad_high != 0;
    based |= d.base_dilation != 1;
    dilated |= d.window_dilation != 1;
    reversed |= d.reversal;
  }
  if (strided) attrs.push_back("window_strides = " + I64Array(strides));
  if (padded) attrs.push_back("padding = " + I64Matrix(pad));
  if (based) attrs.push_back(std::string(lhs) + " = " + I64Array(base));
  if (dilated) attrs.push_back(std::string(rhs) + " = " + I64Array(dil));
  if (reversed) {
    std::string s;
    for (size_t k = 0; k < rev.size(); ++k)
      s += (k ? ", " : "") + std::string(rev[k] ? "true" : "false");
    attrs.push_back("window_reversal = array<i1: " + s + ">");
  }
}

void CollectiveAttrs(const hlo::Attributes& a, std::vector<std::string>& attrs) {
  if (!a.replica_groups.empty()) attrs.push_back("replica_groups = " + I64Matrix(a.replica_groups));
  if (a.channel_id) {
    attrs.push_back("channel_handle = #stablehlo.channel_handle<handle = " +
                    std::to_string(*a.channel_id) + ", type = 1>");
  }
  if (a.use_global_device_ids) attrs.push_back("use_global_device_ids");
}

std::string PrecisionConfig(hlo::DotPrecision p) {
  const char* word = p == hlo::DotPrecision::kHighest ? "HIGHEST"
                     : p == hlo::DotPrecision::kHigh  ? "HIGH"
                                                      : "DEFAULT";
  const std::string one = std::string("#stablehlo<precision ") + word + ">";
  return "precision_config = [" + one + ", " + one + "]";
}

}  // namespace tpuemu::engine::stablehlo::internal
