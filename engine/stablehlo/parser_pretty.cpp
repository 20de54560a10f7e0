// The pretty syntax of StableHLO ops (StableHLO's assembly formats, as stablehlo-opt and JAX
// print them), parsed into the generic attribute names: `dims = [0, 1]` on broadcast_in_dim is
// broadcast_dimensions, `contracting_dims = [1] x [0]` is lhs/rhs_contracting_dimensions, and so
// on. An op without a special form takes operands, `keyword = value` attributes, enum words,
// an attribute dictionary and `: types`.
#include <map>

#include "engine/stablehlo/parser_internal.h"

namespace tpuemu::engine::stablehlo::internal {
namespace {

std::string_view Short(const std::string& name) {
  std::string_view n = name;
  if (n.substr(0, 10) == "stablehlo.") n.remove_prefix(10);
  return n;
}

// The generic name of a pretty keyword of op `op` (short name).
std::string GenericName(std::string_view op, std::string_view keyword) {
  static const std::map<std::pair<std::string_view, std::string_view>, std::string_view> kNames = {
      {{"broadcast_in_dim", "dims"}, "broadcast_dimensions"},
      {{"transpose", "dims"}, "permutation"},
      {{"reverse", "dims"}, "dimensions"},
      {{"broadcast", "sizes"}, "broadcast_sizes"},
      {{"dynamic_slice", "sizes"}, "slice_sizes"},
      {{"concatenate", "dim"}, "dimension"},
      {{"iota", "dim"}, "iota_dimension"},
      {{"get_dimension_size", "dim"}, "dimension"},
      {{"pad", "low"}, "edge_padding_low"},
      {{"pad", "high"}, "edge_padding_high"},
      {{"pad", "interior"}, "interior_padding"},
      {{"dot_general", "precision"}, "precision_config"},
      {{"dot", "precision"}, "precision_config"},
      {{"rng_bit_generator", "algorithm"}, "rng_algorithm"},
      {{"rng", "distribution"}, "rng_distribution"},
      {{"fft", "type"}, "fft_type"},
      {{"fft", "length"}, "fft_length"},
      {{"convolution", "dim_numbers"}, "dimension_numbers"},
      {{"einsum", "config"}, "einsum_config"},
  };
  auto it = kNames.find({op, keyword});
  return it == kNames.end() ? std::string(keyword) : std::string(it->second);
}

Attr IntArray(std::vector<int64_t> values) {
  Attr a;
  a.kind = Attr::Kind::kArray;
  for (int64_t v : values) {
    Attr item;
    item.kind = Attr::Kind::kInt;
    item.i = v;
    a.items.push_back(item);
  }
  return a;
}

Attr Word(std::string text, Attr::Kind kind = Attr::Kind::kEnum) {
  Attr a;
  a.kind = kind;
  a.text = std::move(text);
  return a;
}

}  // namespace

Status Parser::ParseKeywordAttr(Op& op, std::string_view keyword) {
  const std::string_view shorter = Short(op.name);
  if (keyword == "batching_dims" || keyword == "contracting_dims") {
    const std::string kind = keyword == "batching_dims" ? "batching" : "contracting";
    Attr lhs, rhs;
    TPUEMU_RETURN_IF_ERROR(ParseAttr(lhs, false));
    if (!AtIdent("x")) return Expected("'x' between the lhs and rhs dimensions");
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(ParseAttr(rhs, false));
    op.attrs.emplace_back("lhs_" + kind + "_dimensions", std::move(lhs));
    op.attrs.emplace_back("rhs_" + kind + "_dimensions", std::move(rhs));
    return Status::Ok();
  }
  if (keyword == "dim_numbers") {
    Attr dims;
    TPUEMU_RETURN_IF_ERROR(ParseConvDims(dims));
    op.attrs.emplace_back("dimension_numbers", std::move(dims));
    return Status::Ok();
  }
  Attr value;
  TPUEMU_RETURN_IF_ERROR(ParseAttr(value, false));
  if (keyword == "window" && value.kind == Attr::Kind::kDict) {
    static const std::pair<const char*, const char*> kWindow[] = {{"stride", "window_strides"},
                                                                  {"pad", "padding"},
                                                                  {"lhs_dilate", "lhs_dilation"},
                                                                  {"rhs_dilate", "rhs_dilation"},
                                                                  {"reverse", "window_reversal"}};
    for (auto& [k, v] : value.fields) {
      std::string name = k;
      for (const auto& [pretty, generic] : kWindow) {
        if (k == pretty) name = generic;
      }
      op.attrs.emplace_back(std::move(name), std::move(v));
    }
    return Status::Ok();
  }
  if (keyword == "format" && shorter == "reduce_precision") {
    // e8m10: exponent and mantissa bits.
    const std::string& f = value.text;
    const size_t m = f.find('m');
    if (f.size() < 4 || f[0] != 'e' || m == std::string::npos)
      return ErrorHere("expected a format like e8m10");
    Attr e, mant;
    e.kind = mant.kind = Attr::Kind::kInt;
    e.i = std::atoll(f.substr(1, m - 1).c_str());
    mant.i = std::atoll(f.substr(m + 1).c_str());
    op.attrs.emplace_back("exponent_bits", e);
    op.attrs.emplace_back("mantissa_bits", mant);
    return Status::Ok();
  }
  op.attrs.emplace_back(GenericName(shorter, keyword), std::move(value));
  return Status::Ok();
}

Status Parser::ParseSliceRanges(Op& op) {
  // [start:limit(:stride)?, ...]
  lexer_.Lex();
  std::vector<int64_t> start, limit, stride;
  while (lexer_.kind() != Tok::kRsquare) {
    if (!start.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between slice ranges"));
    int64_t v[3] = {0, 0, 1};
    for (int k = 0; k < 3; ++k) {
      if (k > 0 && !EatIf(Tok::kColon)) {
        if (k == 2) break;
        return Expected("':' in a slice range");
      }
      if (lexer_.kind() != Tok::kInt) return Expected("an integer in a slice range");
      v[k] = std::atoll(std::string(lexer_.token().text).c_str());
      lexer_.Lex();
    }
    start.push_back(v[0]);
    limit.push_back(v[1]);
    stride.push_back(v[2]);
  }
  lexer_.Lex();
  op.attrs.emplace_back("start_indices", IntArray(start));
  op.attrs.emplace_back("limit_indices", IntArray(limit));
  op.attrs.emplace_back("strides", IntArray(stride));
  return Status::Ok();
}

// stablehlo.reduce(%x init: %c), ... [applies OP] across dimensions = [..] : type
//   [reducer(%a: t, %b: t) (...) { region }]
Status Parser::ParsePrettyReduce(Op& op) {
  std::vector<ValueRef> inputs, inits;
  do {
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' before a reduce operand"));
    if (lexer_.kind() != Tok::kValue) return Expected("the reduced %value");
    inputs.push_back(MakeRef(lexer_.token()));
    lexer_.Lex();
    if (!AtIdent("init")) return Expected("'init:'");
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kColon, "':' after init"));
    if (lexer_.kind() != Tok::kValue) return Expected("the init %value");
    inits.push_back(MakeRef(lexer_.token()));
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRparen, "')' after the init value"));
  } while (EatIf(Tok::kComma));
  op.operands = inputs;
  op.operands.insert(op.operands.end(), inits.begin(), inits.end());
  std::string applies;
  if (AtIdent("applies")) {
    lexer_.Lex();
    if (lexer_.kind() != Tok::kIdent) return Expected("the reduction op after applies");
    applies = std::string(lexer_.token().text);
    lexer_.Lex();
  }
  if (!AtIdent("across")) return Expected("'across dimensions = [...]'");
  lexer_.Lex();
  if (!AtIdent("dimensions")) return Expected("'dimensions'");
  lexer_.Lex();
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kEqual, "'=' after dimensions"));
  Attr dims;
  TPUEMU_RETURN_IF_ERROR(ParseAttr(dims, false));
  op.attrs.emplace_back("dimensions", std::move(dims));
  if (EatIf(Tok::kLbrace)) TPUEMU_RETURN_IF_ERROR(ParseDict(op.attrs, Tok::kRbrace));
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kColon, "':' before the reduce's type"));
  TPUEMU_RETURN_IF_ERROR(ParseTypeSignature(op));
  const size_t n = inputs.size();
  Region region;
  if (!applies.empty()) {
    if (op.operand_types.size() != 2 * n)
      return ErrorAt(op.line, op.column, "reduce needs a function type");
    region.args.resize(2 * n);
    Op ret;
    ret.name = "stablehlo.return";
    for (size_t k = 0; k < n; ++k) {
      const hlo::Shape scalar = hlo::Shape::Array(op.operand_types[n + k].type, {});
      region.args[k] = {"lhs." + std::to_string(k), scalar};
      region.args[n + k] = {"rhs." + std::to_string(k), scalar};
      Op body;
      body.name = applies;
      body.line = op.line;
      body.column = op.column;
      body.results = {"result." + std::to_string(k)};
      body.operands = {ValueRef{region.args[k].name, op.line, op.column},
                       ValueRef{region.args[n + k].name, op.line, op.column}};
      body.result_types = {scalar};
      body.operand_types = {scalar, scalar};
      ret.operands.push_back(ValueRef{body.results[0], op.line, op.column});
      region.ops.push_back(std::move(body));
    }
    region.ops.push_back(std::move(ret));
  } else {
    if (!AtIdent("reducer")) return Expected("'applies' or a 'reducer' region");
    lexer_.Lex();
    region.args.resize(2 * n);
    for (size_t k = 0; k < n; ++k) {
      TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' before the reducer arguments"));
      std::vector<BlockArg> pair;
      TPUEMU_RETURN_IF_ERROR(ParseBlockArgs(pair));
      if (pair.size() != 2) return ErrorHere("each reducer pair has two arguments");
      region.args[k] = pair[0];
      region.args[n + k] = pair[1];
    }
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start the reducer"));
    Region body;
    TPUEMU_RETURN_IF_ERROR(ParseRegionBody(body, true));
    region.ops = std::move(body.ops);
  }
  op.regions.push_back(std::move(region));
  return Status::Ok();
}

// stablehlo.while(%iterArg = %x, ...) : types cond { ... } do { ... }
Status Parser::ParsePrettyWhile(Op& op) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' after while"));
  std::vector<std::string> names;
  while (lexer_.kind() != Tok::kRparen) {
    if (!names.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between loop values"));
    if (lexer_.kind() != Tok::kValue) return Expected("a loop %value");
    names.emplace_back(lexer_.token().text);
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kEqual, "'=' after a loop value's name"));
    if (lexer_.kind() != Tok::kValue) return Expected("the loop value's initial %value");
    op.operands.push_back(MakeRef(lexer_.token()));
    lexer_.Lex();
  }
  lexer_.Lex();
  if (AtIdent("attributes")) {
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{'"));
    TPUEMU_RETURN_IF_ERROR(ParseDict(op.attrs, Tok::kRbrace));
  }
  if (!names.empty()) {
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kColon, "':' before the loop types"));
    TPUEMU_RETURN_IF_ERROR(ParseTypeSignature(op));
  }
  if (op.result_types.size() != names.size()) {
    return ErrorAt(op.line, op.column,
                   "stablehlo.while has " + std::to_string(names.size()) + " loop values and " +
                       std::to_string(op.result_types.size()) + " types");
  }
  op.operand_types = op.result_types;
  for (const char* word : {"cond", "do"}) {
    if (!AtIdent(word)) return Expected(std::string("'") + word + "' region");
    lexer_.Lex();
    Region region;
    TPUEMU_RETURN_IF_ERROR(ParseRegion(region));
    for (size_t k = 0; k < names.size(); ++k) region.args.push_back({names[k], op.result_types[k]});
    op.regions.push_back(std::move(region));
  }
  return Status::Ok();
}

Status Parser::ParsePrettyOp(Op& op) {
  const std::string_view shorter = Short(op.name);
  if (op.name == "stablehlo.reduce") return ParsePrettyReduce(op);
  if (op.name == "stablehlo.while") return ParsePrettyWhile(op);
  int positional = 0;
  while (true) {
    const Tok k = lexer_.kind();
    if (k == Tok::kColon) {
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(ParseTypeSignature(op));
      break;
    }
    if (k == Tok::kRbrace || k == Tok::kEof || AtIdent("loc")) break;
    if (k == Tok::kComma) {
      lexer_.Lex();
      continue;
    }
    if (k == Tok::kValue) {
      op.operands.push_back(MakeRef(lexer_.token()));
      lexer_.Lex();
      if (lexer_.kind() == Tok::kLsquare) {
        if (shorter == "slice") {
          TPUEMU_RETURN_IF_ERROR(ParseSliceRanges(op));
        } else {  // get_tuple_element %t[0]
          lexer_.Lex();
          Attr index;
          TPUEMU_RETURN_IF_ERROR(ParseAttr(index, false));
          op.attrs.emplace_back("index", std::move(index));
          TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRsquare, "']' after the index"));
        }
      }
      continue;
    }
    if (k == Tok::kLparen) {  // (operands) of convolution, custom_call @t(...), call @f(...)
      lexer_.Lex();
      while (lexer_.kind() != Tok::kRparen) {
        if (lexer_.kind() == Tok::kComma) {
          lexer_.Lex();
          continue;
        }
        if (lexer_.kind() != Tok::kValue) return Expected("an operand %value");
        op.operands.push_back(MakeRef(lexer_.token()));
        lexer_.Lex();
      }
      lexer_.Lex();
      continue;
    }
    if (k == Tok::kSymbol) {
      const bool call = shorter == "call" || op.name == "func.call";
      op.attrs.emplace_back(call ? "callee" : "call_target_name",
                            Word(Unescape(lexer_.token().text), Attr::Kind::kString));
      lexer_.Lex();
      continue;
    }
    if (k == Tok::kString) {  // composite "name", trace "tag"
      op.attrs.emplace_back(shorter == "composite" ? "name" : "tag",
                            Word(Unescape(lexer_.token().text), Attr::Kind::kString));
      lexer_.Lex();
      continue;
    }
    if (k == Tok::kLbrace) {
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(ParseDict(op.attrs, Tok::kRbrace));
      continue;
    }
    if (k == Tok::kIdent) {
      const std::string word(lexer_.token().text);
      if (word == "dense" || word == "array") {
        Attr value;
        TPUEMU_RETURN_IF_ERROR(ParseAttr(value, false));
        op.attrs.emplace_back("value", std::move(value));
        continue;
      }
      if (lexer_.PeekChar() == '=') {
        lexer_.Lex();
        lexer_.Lex();  // '='
        TPUEMU_RETURN_IF_ERROR(ParseKeywordAttr(op, word));
        continue;
      }
      // Enum words in order: compare's direction then type.
      lexer_.Lex();
      static const char* kCompare[] = {"comparison_direction", "compare_type"};
      const std::string name = shorter == "compare" && positional < 2
                                   ? kCompare[positional]
                                   : "word" + std::to_string(positional);
      ++positional;
      op.attrs.emplace_back(name, Word(word));
      continue;
    }
    if (k == Tok::kInt || k == Tok::kFloat) {
      Attr value;
      TPUEMU_RETURN_IF_ERROR(ParseAttr(value, false));
      op.attrs.emplace_back("value", std::move(value));
      continue;
    }
    return Expected("an operand, attribute or ':' in " + op.name);
  }
  return Status::Ok();
}

}  // namespace tpuemu::engine::stablehlo::internal
