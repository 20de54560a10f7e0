// Structured attribute values: window, dim_labels, slice ranges, pad configurations and replica
// groups (nested lists and the iota form [G,S]<=[dims]T(perm)).
#include <algorithm>
#include <cctype>

#include "engine/hlo/parser_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

// Splits "a_b_cxd_e" style patterns: the parts between `sep`, parsed as integers.
bool SplitInts(std::string_view s, char sep, std::vector<int64_t>& out) {
  out.clear();
  size_t start = 0;
  while (true) {
    const size_t end = std::min(s.find(sep, start), s.size());
    const std::string_view part = s.substr(start, end - start);
    if (part.empty()) return false;
    int64_t v = 0;
    size_t i = 0;
    const bool neg = part[0] == '-';
    if (neg) i = 1;
    if (i >= part.size()) return false;
    for (; i < part.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(part[i]))) return false;
      v = v * 10 + (part[i] - '0');
      if (v > (int64_t{1} << 50)) return false;
    }
    out.push_back(neg ? -v : v);
    if (end == s.size()) return true;
    start = end + 1;
  }
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = std::min(s.find(sep, start), s.size());
    parts.push_back(s.substr(start, end - start));
    if (end == s.size()) return parts;
    start = end + 1;
  }
}

}  // namespace

// '{' (size|stride|pad|lhs_dilate|rhs_dilate|rhs_reversal '=' value)* '}'
Status Parser::ParseWindow(std::vector<WindowDim>& window) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start the window"));
  std::vector<int64_t> size, stride, lhs, rhs, reversal;
  std::vector<std::vector<int64_t>> pad;
  while (!EatIf(Tok::kRbrace)) {
    if (lexer_.kind() != Tok::kAttributeName) return Expected("a window field (size=, stride=...)");
    const std::string_view field = lexer_.token().text;
    lexer_.Lex();
    const Token& t = lexer_.token();
    if (field == "pad") {
      if (t.kind != Tok::kPad) return Expected("a pad pattern such as 0_1x1_1");
      for (std::string_view dim : Split(t.text, 'x')) {
        std::vector<int64_t> lh;
        if (!SplitInts(dim, '_', lh) || lh.size() != 2) return Expected("low_high pads");
        pad.push_back(lh);
      }
      lexer_.Lex();
      continue;
    }
    std::vector<int64_t>* target = field == "size"           ? &size
                                   : field == "stride"       ? &stride
                                   : field == "lhs_dilate"   ? &lhs
                                   : field == "rhs_dilate"   ? &rhs
                                   : field == "rhs_reversal" ? &reversal
                                                             : nullptr;
    if (target == nullptr) return ErrorHere("unknown window field '" + std::string(field) + "'");
    if (t.kind == Tok::kInt) {
      target->assign(1, t.int_value);
    } else if (t.kind != Tok::kDxD || !SplitInts(t.text, 'x', *target)) {
      return Expected("a size such as 3 or 3x3 after " + std::string(field) + "=");
    }
    lexer_.Lex();
  }
  const size_t n = size.size();
  for (const auto* v : {&stride, &lhs, &rhs, &reversal}) {
    if (!v->empty() && v->size() != n) {
      return ErrorHere("every window field needs as many dimensions as size= (" +
                       std::to_string(n) + ")");
    }
  }
  if (!pad.empty() && pad.size() != n) {
    return ErrorHere("window pad= needs as many dimensions as size=");
  }
  window.assign(n, WindowDim{});
  for (size_t i = 0; i < n; ++i) {
    window[i].size = size[i];
    if (!stride.empty()) window[i].stride = stride[i];
    if (!lhs.empty()) window[i].base_dilation = lhs[i];
    if (!rhs.empty()) window[i].window_dilation = rhs[i];
    if (!reversal.empty()) window[i].reversal = reversal[i] == 1;
    if (!pad.empty()) {
      window[i].pad_low = pad[i][0];
      window[i].pad_high = pad[i][1];
    }
  }
  return Status::Ok();
}

// b01f_01io->b01f: batch/feature letters and spatial digits, '?' for unused dims.
Status Parser::ParseDimLabels(ConvDims& dims) {
  if (lexer_.kind() != Tok::kDimLabels) return Expected("dim labels such as b01f_01io->b01f");
  const std::string_view s = lexer_.token().text;
  const size_t underscore = s.find('_');
  const size_t arrow = s.find("->");
  const std::string_view lhs = s.substr(0, underscore);
  const std::string_view rhs = s.substr(underscore + 1, arrow - underscore - 1);
  const std::string_view out = s.substr(arrow + 2);
  auto assign = [&](std::string_view labels, char a, char b, int64_t& da, int64_t& db,
                    std::vector<int64_t>& spatial, const char* which) -> Status {
    size_t n = 0;
    for (char c : labels) n += (c != a && c != b && c != '?') ? 1 : 0;
    spatial.assign(n, -1);
    bool seen_a = false, seen_b = false;
    for (size_t i = 0; i < labels.size(); ++i) {
      const char c = labels[i];
      if (c == '?') continue;
      if (c == a || c == b) {
        bool& seen = c == a ? seen_a : seen_b;
        if (seen) return ErrorHere(std::string("repeated '") + c + "' in the " + which + " labels");
        seen = true;
        (c == a ? da : db) = static_cast<int64_t>(i);
        continue;
      }
      const auto k = static_cast<size_t>(c - '0');
      if (c < '0' || c > '9' || k >= n || spatial[k] >= 0) {
        return ErrorHere(std::string("bad spatial label '") + c + "' in the " + which + " labels");
      }
      spatial[k] = static_cast<int64_t>(i);
    }
    if (!seen_a || !seen_b) {
      return ErrorHere(std::string("the ") + which + " labels need '" + a + "' and '" + b + "'");
    }
    return Status::Ok();
  };
  TPUEMU_RETURN_IF_ERROR(
      assign(lhs, 'b', 'f', dims.input_batch, dims.input_feature, dims.input_spatial, "input"));
  TPUEMU_RETURN_IF_ERROR(assign(rhs, 'i', 'o', dims.kernel_input_feature,
                                dims.kernel_output_feature, dims.kernel_spatial, "kernel"));
  TPUEMU_RETURN_IF_ERROR(
      assign(out, 'b', 'f', dims.output_batch, dims.output_feature, dims.output_spatial, "output"));
  if (dims.input_spatial.size() != dims.kernel_spatial.size() ||
      dims.input_spatial.size() != dims.output_spatial.size()) {
    return ErrorHere("input, kernel and output labels need the same number of spatial dims");
  }
  lexer_.Lex();
  return Status::Ok();
}

// '{' '[' start ':' limit [':' stride] ']' (',' ...)* '}'
Status Parser::ParseSliceRanges(Attributes& a) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start the slice ranges"));
  if (EatIf(Tok::kRbrace)) return Status::Ok();
  do {
    std::vector<int64_t> range;
    TPUEMU_RETURN_IF_ERROR(
        IntList(Tok::kLsquare, Tok::kRsquare, Tok::kColon, range, "a slice range [start:limit]"));
    if (range.size() != 2 && range.size() != 3) {
      return ErrorHere("a slice range is [start:limit] or [start:limit:stride]");
    }
    a.slice_start.push_back(range[0]);
    a.slice_limit.push_back(range[1]);
    a.slice_stride.push_back(range.size() == 3 ? range[2] : 1);
  } while (EatIf(Tok::kComma));
  return Expect(Tok::kRbrace, "'}' to end the slice ranges");
}

// low_high[_interior] per dimension, joined by 'x'.
Status Parser::ParsePadding(std::vector<PadDim>& padding) {
  if (lexer_.kind() != Tok::kPad) {
    if (lexer_.kind() == Tok::kComma || lexer_.kind() == Tok::kRbrace) return Status::Ok();
    return Expected("a padding pattern such as 0_1_0x2_2_1");
  }
  for (std::string_view dim : Split(lexer_.token().text, 'x')) {
    std::vector<int64_t> v;
    if (!SplitInts(dim, '_', v) || (v.size() != 2 && v.size() != 3)) {
      return Expected("low_high or low_high_interior padding");
    }
    padding.push_back({v[0], v[1], v.size() == 3 ? v[2] : 0});
  }
  lexer_.Lex();
  return Status::Ok();
}

// '{' ['{' ids '}' (',' '{' ids '}')*] '}' | '[' groups ',' size ']' '<=' '[' dims ']' ['T(' perm
// ')']
Status Parser::ParseReplicaGroups(std::vector<std::vector<int64_t>>& groups) {
  groups.clear();
  if (lexer_.kind() == Tok::kLbrace) {
    lexer_.Lex();
    if (EatIf(Tok::kRbrace)) return Status::Ok();
    do {
      groups.emplace_back();
      TPUEMU_RETURN_IF_ERROR(
          IntList(Tok::kLbrace, Tok::kRbrace, Tok::kComma, groups.back(), "a replica group"));
    } while (EatIf(Tok::kComma));
    return Expect(Tok::kRbrace, "'}' to end replica_groups");
  }
  std::vector<int64_t> tile, reshape, perm;
  TPUEMU_RETURN_IF_ERROR(
      IntList(Tok::kLsquare, Tok::kRsquare, Tok::kComma, tile, "the replica group tile"));
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLeq, "'<=' in the iota replica groups"));
  TPUEMU_RETURN_IF_ERROR(
      IntList(Tok::kLsquare, Tok::kRsquare, Tok::kComma, reshape, "the iota reshape dims"));
  if (AtIdent("T")) {
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(
        IntList(Tok::kLparen, Tok::kRparen, Tok::kComma, perm, "the iota transpose"));
  }
  if (tile.size() != 2) return ErrorHere("iota replica groups need a [groups,size] tile");
  int64_t total = 1;
  for (int64_t d : reshape) {
    if (d < 1 || d > (int64_t{1} << 20)) return ErrorHere("bad iota reshape dimension");
    total *= d;
    if (total > (int64_t{1} << 20)) return ErrorHere("iota replica groups are too large");
  }
  if (tile[0] < 1 || tile[1] < 1 || tile[0] * tile[1] != total) {
    return ErrorHere("the iota tile does not match the reshape dims");
  }
  if (perm.empty()) {
    for (size_t i = 0; i < reshape.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i) || perm.size() != reshape.size()) {
      return ErrorHere("the iota transpose is not a permutation of the reshape dims");
    }
  }
  // Device ids: iota(total) reshaped to `reshape`, transposed by `perm`, read row-major.
  std::vector<int64_t> tdims(perm.size()), src_strides(reshape.size(), 1);
  for (int i = static_cast<int>(reshape.size()) - 2; i >= 0; --i) {
    src_strides[static_cast<size_t>(i)] =
        src_strides[static_cast<size_t>(i) + 1] * reshape[static_cast<size_t>(i) + 1];
  }
  for (size_t i = 0; i < perm.size(); ++i) tdims[i] = reshape[static_cast<size_t>(perm[i])];
  std::vector<int64_t> idx(perm.size(), 0), ids;
  ids.reserve(static_cast<size_t>(total));
  for (int64_t n = 0; n < total; ++n) {
    int64_t id = 0;
    for (size_t i = 0; i < perm.size(); ++i)
      id += idx[i] * src_strides[static_cast<size_t>(perm[i])];
    ids.push_back(id);
    for (int i = static_cast<int>(tdims.size()) - 1; i >= 0; --i) {
      if (++idx[static_cast<size_t>(i)] < tdims[static_cast<size_t>(i)]) break;
      idx[static_cast<size_t>(i)] = 0;
    }
  }
  for (int64_t g = 0; g < tile[0]; ++g) {
    groups.emplace_back(ids.begin() + g * tile[1], ids.begin() + (g + 1) * tile[1]);
  }
  return Status::Ok();
}

}  // namespace tpuemu::engine::hlo::internal
