// Types of StableHLO text: element types, tensor<...>, tuple<...> and !stablehlo.token.
#include "engine/stablehlo/parser_internal.h"

namespace tpuemu::engine::stablehlo::internal {

Result<hlo::PrimitiveType> ElementType(std::string_view w) {
  using hlo::PrimitiveType;
  struct Name {
    const char* text;
    PrimitiveType type;
  };
  static const Name kNames[] = {
      {"i1", PrimitiveType::kPred},
      {"i2", PrimitiveType::kS2},
      {"i4", PrimitiveType::kS4},
      {"i8", PrimitiveType::kS8},
      {"i16", PrimitiveType::kS16},
      {"i32", PrimitiveType::kS32},
      {"i64", PrimitiveType::kS64},
      {"si2", PrimitiveType::kS2},
      {"si4", PrimitiveType::kS4},
      {"si8", PrimitiveType::kS8},
      {"si16", PrimitiveType::kS16},
      {"si32", PrimitiveType::kS32},
      {"si64", PrimitiveType::kS64},
      {"ui2", PrimitiveType::kU2},
      {"ui4", PrimitiveType::kU4},
      {"ui8", PrimitiveType::kU8},
      {"ui16", PrimitiveType::kU16},
      {"ui32", PrimitiveType::kU32},
      {"ui64", PrimitiveType::kU64},
      {"f16", PrimitiveType::kF16},
      {"bf16", PrimitiveType::kBF16},
      {"f32", PrimitiveType::kF32},
      {"f64", PrimitiveType::kF64},
      {"complex<f32>", PrimitiveType::kC64},
      {"complex<f64>", PrimitiveType::kC128},
      {"f8E4M3FN", PrimitiveType::kF8E4M3FN},
      {"f8E5M2", PrimitiveType::kF8E5M2},
      {"f8E4M3FNUZ", PrimitiveType::kF8E4M3FNUZ},
      {"f8E5M2FNUZ", PrimitiveType::kF8E5M2FNUZ},
      {"f8E4M3B11FNUZ", PrimitiveType::kF8E4M3B11FNUZ},
      {"f8E3M4", PrimitiveType::kF8E3M4},
      {"f8E4M3", PrimitiveType::kF8E4M3},
      {"f8E8M0FNU", PrimitiveType::kF8E8M0FNU},
      {"f4E2M1FN", PrimitiveType::kF4E2M1FN},
  };
  for (const Name& n : kNames) {
    if (w == n.text) return n.type;
  }
  if (w.substr(0, 6) == "!quant") {
    return Status::InvalidArgument("quantized element type " + std::string(w) +
                                   " is not supported (the HLO stack has no quantized types)");
  }
  return Status::InvalidArgument("element type '" + std::string(w) + "' is not supported");
}

Status Parser::ParseTensorBody(std::string_view body, hlo::Shape& out) {
  std::vector<int64_t> dims;
  size_t p = 0;
  auto space = [&] {
    while (p < body.size() && (body[p] == ' ' || body[p] == '\n' || body[p] == '\t')) ++p;
  };
  space();
  while (p < body.size()) {
    if (body[p] == '?' || body[p] == '*') {
      return ErrorHere("dynamic shape tensor<" + std::string(body) +
                       "> is not supported (tpuemu runs static shapes, as XLA compiles them)");
    }
    if (body[p] < '0' || body[p] > '9') break;
    int64_t d = 0;
    while (p < body.size() && body[p] >= '0' && body[p] <= '9') {
      d = d * 10 + (body[p] - '0');
      if (d > (int64_t{1} << 40))
        return ErrorHere("dimension too large in tensor<" + std::string(body) + ">");
      ++p;
    }
    if (p >= body.size() || body[p] != 'x')
      return ErrorHere("expected 'x' after a dimension in tensor<" + std::string(body) + ">");
    ++p;
    dims.push_back(d);
  }
  std::string_view element = body.substr(p);
  if (const size_t comma = element.find(',');
      comma != std::string_view::npos && element.substr(0, 6) != "!quant") {
    std::string_view encoding = element.substr(comma + 1);
    element = element.substr(0, comma);
    while (!encoding.empty() && encoding[0] == ' ') encoding.remove_prefix(1);
    // Bounds of dynamic dimensions, sparse encodings: an encoding changes what the type means.
    return ErrorHere("tensor encoding '" + std::string(encoding) + "' in tensor<" +
                     std::string(body) + "> is not supported");
  }
  while (!element.empty() && element.back() == ' ') element.remove_suffix(1);
  Result<hlo::PrimitiveType> type =
      in_attr_type_ && element == "index" ? hlo::PrimitiveType::kS64 : ElementType(element);
  if (!type.ok())
    return ErrorHere(type.status().message() + " (in tensor<" + std::string(body) + ">)");
  out = hlo::Shape::Array(*type, std::move(dims));
  return Status::Ok();
}

Status Parser::ParseType(hlo::Shape& out) {
  if (AtIdent("tensor")) {
    std::string_view body;
    if (!lexer_.RawAngle(&body)) return ErrorHere("expected '<...>' after tensor");
    TPUEMU_RETURN_IF_ERROR(ParseTensorBody(body, out));
    lexer_.Lex();
    return Status::Ok();
  }
  if (AtIdent("tuple")) {
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLess, "'<' after tuple"));
    TPUEMU_RETURN_IF_ERROR(Enter());
    std::vector<hlo::Shape> elements;
    while (lexer_.kind() != Tok::kGreater) {
      if (!elements.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between tuple types"));
      elements.emplace_back();
      TPUEMU_RETURN_IF_ERROR(ParseType(elements.back()));
    }
    lexer_.Lex();
    Leave();
    out = hlo::Shape::Tuple(std::move(elements));
    return Status::Ok();
  }
  if (lexer_.kind() == Tok::kBang &&
      (lexer_.token().text == "stablehlo.token" || lexer_.token().text == "mhlo.token")) {
    out = hlo::Shape::Array(hlo::PrimitiveType::kToken, {});
    out.type = hlo::PrimitiveType::kToken;
    lexer_.Lex();
    return Status::Ok();
  }
  if (lexer_.kind() == Tok::kIdent) {
    const std::string word(lexer_.token().text);
    if (ElementType(word).ok()) {
      return ErrorHere("type " + word +
                       " is a scalar outside a tensor; StableHLO values are tensor<" + word + ">");
    }
    return ErrorHere("type '" + word + "' is not supported");
  }
  if (lexer_.kind() == Tok::kBang) {
    return ErrorHere("type !" + std::string(lexer_.token().text) + " is not supported");
  }
  return Expected("a type (tensor<...>, tuple<...> or !stablehlo.token)");
}

}  // namespace tpuemu::engine::stablehlo::internal
