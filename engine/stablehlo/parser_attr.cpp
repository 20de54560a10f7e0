// Attribute values and dense literals of StableHLO text (types: parser_type.cpp).
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "engine/stablehlo/parser_internal.h"

namespace tpuemu::engine::stablehlo::internal {
namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseIntText(std::string_view text, int64_t* out) {
  bool neg = !text.empty() && text[0] == '-';
  std::string_view digits = neg ? text.substr(1) : text;
  uint64_t v = 0;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    for (char c : digits.substr(2)) v = v * 16 + static_cast<uint64_t>(Hex(c));
  } else {
    for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

}  // namespace

Status Parser::SkipBalanced() {
  TPUEMU_RETURN_IF_ERROR(Enter());
  const Tok open = lexer_.kind();
  Tok close = Tok::kRparen;
  if (open == Tok::kLsquare) close = Tok::kRsquare;
  if (open == Tok::kLbrace) close = Tok::kRbrace;
  if (open == Tok::kLess) close = Tok::kGreater;
  lexer_.Lex();
  while (lexer_.kind() != close) {
    const Tok k = lexer_.kind();
    if (k == Tok::kEof || k == Tok::kError) return Expected(TokName(close));
    if (k == Tok::kLparen || k == Tok::kLsquare || k == Tok::kLbrace || k == Tok::kLess) {
      TPUEMU_RETURN_IF_ERROR(SkipBalanced());
    } else {
      lexer_.Lex();
    }
  }
  lexer_.Lex();
  Leave();
  return Status::Ok();
}

Status Parser::ParseDict(std::vector<AttrField>& out, Tok close) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  bool first = true;
  while (lexer_.kind() != close) {
    if (!first) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between attributes"));
    first = false;
    std::string key;
    if (lexer_.kind() == Tok::kIdent) {
      key = std::string(lexer_.token().text);
    } else if (lexer_.kind() == Tok::kString) {
      key = Unescape(lexer_.token().text);
    } else {
      return Expected("an attribute name");
    }
    lexer_.Lex();
    Attr value;
    if (EatIf(Tok::kEqual)) TPUEMU_RETURN_IF_ERROR(ParseAttr(value));
    out.emplace_back(std::move(key), std::move(value));
  }
  lexer_.Lex();
  Leave();
  return Status::Ok();
}

Status Parser::ParseConvDims(Attr& out) {
  // [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] (or "raw b01f_01io->b01f" in old printers: refused)
  out.kind = Attr::Kind::kDict;
  out.text = "stablehlo.conv";
  static const char* kParts[] = {"input", "kernel", "output"};
  for (int part = 0; part < 3; ++part) {
    if (part == 1 && !(AtIdent("x") && (lexer_.Lex(), true)))
      return Expected("'x' between the conv dimension lists");
    if (part == 2) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kArrow, "'->' before the output dimensions"));
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLsquare, "'[' to start conv dimension labels"));
    Attr list;
    list.kind = Attr::Kind::kArray;
    while (lexer_.kind() != Tok::kRsquare) {
      if (!list.items.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between labels"));
      Attr label;
      label.kind = Attr::Kind::kString;
      if (lexer_.kind() != Tok::kIdent && lexer_.kind() != Tok::kInt)
        return Expected("a dimension label");
      label.text = std::string(lexer_.token().text);
      lexer_.Lex();
      list.items.push_back(std::move(label));
    }
    lexer_.Lex();
    out.fields.emplace_back(kParts[part], std::move(list));
  }
  return Status::Ok();
}

Status Parser::ParseAttr(Attr& out, bool allow_type_suffix) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  const Token t = lexer_.token();
  auto type_suffix = [&]() -> Status {
    if (allow_type_suffix && lexer_.kind() == Tok::kColon) {
      lexer_.Lex();
      if (lexer_.kind() == Tok::kIdent && ElementType(lexer_.token().text).ok()) {
        out.type = hlo::Shape::Array(*ElementType(lexer_.token().text), {});
        lexer_.Lex();
        return Status::Ok();
      }
      if (AtIdent("index") || AtIdent("none")) {
        lexer_.Lex();
        return Status::Ok();
      }
      // An attribute's tensor may hold `index` elements (torch_xla's result_layout =
      // dense<[0, 1]> : tensor<2xindex>): read as i64; a value of that type is still refused.
      in_attr_type_ = true;
      Status typed = ParseType(out.type);
      in_attr_type_ = false;
      return typed;
    }
    return Status::Ok();
  };
  switch (t.kind) {
    case Tok::kInt:
      out.kind = Attr::Kind::kInt;
      ParseIntText(t.text, &out.i);
      out.f = static_cast<double>(out.i);
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(type_suffix());
      break;
    case Tok::kFloat:
      out.kind = Attr::Kind::kFloat;
      out.f = std::strtod(std::string(t.text).c_str(), nullptr);
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(type_suffix());
      break;
    case Tok::kString:
      out.kind = Attr::Kind::kString;
      out.text = Unescape(t.text);
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(type_suffix());
      break;
    case Tok::kSymbol:
      out.kind = Attr::Kind::kSymbol;
      out.text = std::string(t.text);
      lexer_.Lex();
      break;
    case Tok::kLsquare:
      out.kind = Attr::Kind::kArray;
      lexer_.Lex();
      while (lexer_.kind() != Tok::kRsquare) {
        if (!out.items.empty())
          TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between array items"));
        out.items.emplace_back();
        TPUEMU_RETURN_IF_ERROR(ParseAttr(out.items.back()));
      }
      lexer_.Lex();
      break;
    case Tok::kLbrace:
      out.kind = Attr::Kind::kDict;
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(ParseDict(out.fields, Tok::kRbrace));
      break;
    case Tok::kLess:  // <field = value, ...> (the pretty dot algorithm)
      out.kind = Attr::Kind::kDict;
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(ParseDict(out.fields, Tok::kGreater));
      break;
    case Tok::kHash: {
      out.text = std::string(t.text);
      lexer_.Lex();
      if (lexer_.kind() != Tok::kLess) {  // an alias (#loc3, #map)
        out.kind = Attr::Kind::kEnum;
        break;
      }
      if (out.text == "stablehlo" || out.text == "mhlo" || out.text == "chlo") {
        // #stablehlo<precision DEFAULT>: the second word is the value.
        lexer_.Lex();
        out.kind = Attr::Kind::kEnum;
        if (lexer_.kind() != Tok::kIdent) return Expected("an enum kind");
        lexer_.Lex();
        if (lexer_.kind() != Tok::kIdent) return Expected("an enum value");
        out.text = std::string(lexer_.token().text);
        lexer_.Lex();
        TPUEMU_RETURN_IF_ERROR(Expect(Tok::kGreater, "'>' to end the enum"));
        break;
      }
      if (out.text == "stablehlo.conv" || out.text == "mhlo.conv") {
        lexer_.Lex();
        if (AtIdent("raw")) return ErrorHere("raw convolution dimension labels are not supported");
        TPUEMU_RETURN_IF_ERROR(ParseConvDims(out));
        TPUEMU_RETURN_IF_ERROR(Expect(Tok::kGreater, "'>' to end the conv dimensions"));
        break;
      }
      if (lexer_.PeekChar() == '{' || lexer_.PeekChar() == '"' || lexer_.PeekChar() == '(') {
        // #sparse_tensor.encoding<{...}>, #stablehlo.result_accuracy_mode<DEFAULT>...: kept opaque.
        out.kind = Attr::Kind::kEnum;
        TPUEMU_RETURN_IF_ERROR(SkipBalanced());
        break;
      }
      lexer_.Lex();
      out.kind = Attr::Kind::kDict;
      if (lexer_.kind() == Tok::kIdent && lexer_.PeekChar() == '>') {
        // #stablehlo.result_accuracy_mode<DEFAULT>: a single word.
        out.kind = Attr::Kind::kEnum;
        out.text = std::string(lexer_.token().text);
        lexer_.Lex();
        TPUEMU_RETURN_IF_ERROR(Expect(Tok::kGreater, "'>'"));
        break;
      }
      TPUEMU_RETURN_IF_ERROR(ParseDict(out.fields, Tok::kGreater));
      break;
    }
    case Tok::kIdent: {
      const std::string_view w = t.text;
      if (w == "true" || w == "false") {
        out.kind = Attr::Kind::kBool;
        out.i = w == "true";
        lexer_.Lex();
        TPUEMU_RETURN_IF_ERROR(type_suffix());
        break;
      }
      if (w == "unit") {
        out.kind = Attr::Kind::kUnit;
        lexer_.Lex();
        break;
      }
      if (w == "dense") {
        TPUEMU_RETURN_IF_ERROR(ParseDense(out));
        TPUEMU_RETURN_IF_ERROR(type_suffix());
        break;
      }
      if (w == "dense_resource") {
        return ErrorHere(
            "dense_resource literals (blobs outside the text) are not supported; print "
            "the module with large constants inline");
      }
      if (w == "array") {
        lexer_.Lex();
        TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLess, "'<' after array"));
        if (lexer_.kind() != Tok::kIdent) return Expected("the array's element type");
        lexer_.Lex();
        out.kind = Attr::Kind::kArray;
        if (EatIf(Tok::kColon)) {
          while (lexer_.kind() != Tok::kGreater) {
            if (!out.items.empty())
              TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between items"));
            out.items.emplace_back();
            TPUEMU_RETURN_IF_ERROR(ParseAttr(out.items.back(), false));
          }
        }
        TPUEMU_RETURN_IF_ERROR(Expect(Tok::kGreater, "'>' to end the array"));
        break;
      }
      if (w == "loc" && lexer_.PeekChar() == '(') {
        lexer_.Lex();
        out.kind = Attr::Kind::kEnum;
        TPUEMU_RETURN_IF_ERROR(SkipBalanced());
        break;
      }
      if (w == "tensor" || w == "tuple") {
        out.kind = Attr::Kind::kType;
        TPUEMU_RETURN_IF_ERROR(ParseType(out.type));
        break;
      }
      if (w == "affine_map" || w == "distinct") {
        lexer_.Lex();
        out.kind = Attr::Kind::kEnum;
        TPUEMU_RETURN_IF_ERROR(SkipBalanced());
        break;
      }
      out.kind = Attr::Kind::kEnum;  // DEFAULT, GT, tf32, i64, ...
      out.text = std::string(w);
      lexer_.Lex();
      break;
    }
    case Tok::kBang:
      out.kind = Attr::Kind::kType;
      TPUEMU_RETURN_IF_ERROR(ParseType(out.type));
      break;
    default:
      return Expected("an attribute value");
  }
  Leave();
  return Status::Ok();
}

Status Parser::ParseDense(Attr& out) {
  lexer_.Lex();  // dense
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLess, "'<' after dense"));
  auto lit = std::make_shared<DenseLiteral>();
  if (lexer_.kind() == Tok::kString) {
    const std::string_view s = lexer_.token().text;
    if (s.size() < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || s.size() % 2 != 0) {
      return ErrorHere("a dense hex string must be \"0x\" and an even number of hex digits");
    }
    lit->is_blob = true;
    lit->hex_blob.reserve(s.size() / 2);
    for (size_t k = 2; k < s.size(); k += 2) {
      const int hi = Hex(s[k]), lo = Hex(s[k + 1]);
      if (hi < 0 || lo < 0) return ErrorHere("invalid hex digit in the dense string");
      lit->hex_blob.push_back(static_cast<char>(hi * 16 + lo));
    }
    lexer_.Lex();
  } else if (lexer_.kind() != Tok::kGreater) {  // dense<> is an empty tensor
    if (lexer_.kind() == Tok::kLsquare) {
      TPUEMU_RETURN_IF_ERROR(ParseDenseList(*lit, 0));
    } else {
      TPUEMU_RETURN_IF_ERROR(ParseDenseElement(*lit));
    }
  }
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kGreater, "'>' to end the dense literal"));
  out.kind = Attr::Kind::kDense;
  out.dense = std::move(lit);
  return Status::Ok();
}

Status Parser::ParseDenseList(DenseLiteral& lit, int level) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  lexer_.Lex();  // [
  int64_t count = 0;
  while (lexer_.kind() != Tok::kRsquare) {
    if (count > 0) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between dense elements"));
    if (lexer_.kind() == Tok::kLsquare) {
      TPUEMU_RETURN_IF_ERROR(ParseDenseList(lit, level + 1));
    } else {
      TPUEMU_RETURN_IF_ERROR(ParseDenseElement(lit));
    }
    ++count;
  }
  lexer_.Lex();
  if (static_cast<int>(lit.nested.size()) <= level)
    lit.nested.resize(static_cast<size_t>(level) + 1, -1);
  int64_t& n = lit.nested[static_cast<size_t>(level)];
  if (n >= 0 && n != count) return ErrorHere("dense literal rows have different lengths");
  n = count;
  Leave();
  return Status::Ok();
}

Status Parser::ParseDenseElement(DenseLiteral& lit) {
  auto scalar = [&]() -> Status {
    const Token& t = lexer_.token();
    DenseLiteral::Element e;
    e.text = t.text;
    if (t.kind == Tok::kInt) {
      e.negative = t.text[0] == '-';
      std::string_view d = e.negative ? t.text.substr(1) : t.text;
      e.is_hex = d.size() > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X');
      uint64_t v = 0;
      if (e.is_hex) {
        for (char c : d.substr(2)) v = v * 16 + static_cast<uint64_t>(Hex(c));
      } else {
        for (char c : d) {
          const auto digit = static_cast<uint64_t>(c - '0');
          if (v > (~uint64_t{0} - digit) / 10) {
            return ErrorHere("integer " + std::string(t.text) + " is too large");
          }
          v = v * 10 + digit;
        }
      }
      e.bits = e.negative ? 0 - v : v;
      e.value = e.negative ? -static_cast<double>(v) : static_cast<double>(v);
    } else if (t.kind == Tok::kFloat) {
      e.is_float = true;
      e.value = std::strtod(std::string(t.text).c_str(), nullptr);
    } else if (AtIdent("true") || AtIdent("false")) {
      e.is_bool = true;
      e.bits = t.text == "true";
      e.value = static_cast<double>(e.bits);
    } else if (AtIdent("inf") || AtIdent("nan")) {
      e.is_float = true;
      e.value = t.text == "inf" ? HUGE_VAL : std::nan("");
    } else {
      return Expected("a dense element (number, true, false or (re, im))");
    }
    lit.elements.push_back(e);
    lexer_.Lex();
    return Status::Ok();
  };
  if (EatIf(Tok::kLparen)) {  // (re, im)
    lit.complex = true;
    TPUEMU_RETURN_IF_ERROR(scalar());
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' in a complex pair"));
    TPUEMU_RETURN_IF_ERROR(scalar());
    return Expect(Tok::kRparen, "')' to end a complex pair");
  }
  return scalar();
}

}  // namespace tpuemu::engine::stablehlo::internal
