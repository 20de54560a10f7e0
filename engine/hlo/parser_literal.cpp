// Constant literals: scalars, nested {...} arrays (with /*index*/ comments), tuples in (...),
// and the elided form {...} that dumps print for large constants (kept as "no value": the
// evaluator fills it from the seed, see docs/hlo.md).
#include <cmath>
#include <limits>

#include "engine/hlo/parser_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

// The smallest magnitude that rounds to infinity in `type` (the largest finite value plus half
// an ulp): what XLA's parser rejects as out of range, so `bf16 3.39e+38`, which XLA itself
// prints for the largest bf16, is accepted.
double Overflow(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16:
      return 65520.0;
    case PrimitiveType::kBF16:
      return 3.3895313892515355e38 + std::ldexp(1.0, 119);
    default:
      return static_cast<double>(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103);
  }
}

bool IntInRange(PrimitiveType type, int64_t v, bool above_int64_max) {
  // u64: any 64-bit pattern, negatives wrapping as XLA's parser allows (`u64[] constant(-1)`).
  if (type == PrimitiveType::kU64) return true;
  if (above_int64_max) return false;
  switch (type) {
    case PrimitiveType::kPred:
      return true;
    case PrimitiveType::kS8:
      return v >= -128 && v <= 127;
    case PrimitiveType::kS16:
      return v >= -32768 && v <= 32767;
    case PrimitiveType::kS32:
      return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    case PrimitiveType::kU8:
      return v >= 0 && v <= 255;
    case PrimitiveType::kU16:
      return v >= 0 && v <= 65535;
    case PrimitiveType::kU32:
      return v >= 0 && v <= 4294967295LL;
    default:
      return true;
  }
}

}  // namespace

Status Parser::ParseLiteral(const Shape& shape, std::shared_ptr<const Value>& out) {
  if (shape.IsArray() && lexer_.kind() == Tok::kLbrace && lexer_.LookAhead() == Tok::kDots) {
    lexer_.Lex();
    lexer_.Lex();
    out = nullptr;  // elided: {...}
    return Expect(Tok::kRbrace, "'}' after '...'");
  }
  Value value;
  TPUEMU_RETURN_IF_ERROR(ParseLiteralValue(shape, value));
  out = std::make_shared<const Value>(std::move(value));
  return Status::Ok();
}

Status Parser::ParseLiteralValue(const Shape& shape, Value& out) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  if (shape.IsTuple()) {
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' to start a tuple literal"));
    std::vector<Value> elements(shape.tuple.size());
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between tuple elements"));
      TPUEMU_RETURN_IF_ERROR(ParseLiteralValue(shape.tuple[i], elements[i]));
    }
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRparen, "')' to end the tuple literal"));
    out = Value::Tuple(std::move(elements));
    --depth_;
    return Status::Ok();
  }
  if (!IsEvaluable(shape.type)) {
    // f64, complex, f8, sub-byte...: parsed for the syntax, values not kept (only priced).
    int depth = 0;
    do {
      const Tok k = lexer_.kind();
      if (k == Tok::kLbrace || k == Tok::kLparen) ++depth;
      if (k == Tok::kRbrace || k == Tok::kRparen) --depth;
      if (k == Tok::kEof || k == Tok::kError) return Expected("the end of the literal");
      lexer_.Lex();
    } while (depth > 0);
    out = Value::Tuple({});
    --depth_;
    return Status::Ok();
  }
  for (int64_t d : shape.dims) {
    if (d < 0) return ErrorHere("a constant cannot have an unbounded dimension");
  }
  // Every element takes at least one character, so a shape larger than the rest of the text
  // cannot be a complete literal: refuse before allocating it.
  const int64_t elements = Product(shape.dims);
  if (elements < 0 || elements > static_cast<int64_t>(limits_.max_text_bytes)) {
    return ErrorHere("constant of shape " + shape.ToString() + " is larger than its text");
  }
  Array array = Array::Zeros(shape.type, shape.dims);
  if (shape.dims.empty()) {
    TPUEMU_RETURN_IF_ERROR(ParseElement(shape, array, 0));
  } else {
    int64_t next = 0;
    TPUEMU_RETURN_IF_ERROR(ParseDense(shape, array, 0, next));
  }
  out = Value::Of(std::move(array));
  --depth_;
  return Status::Ok();
}

Status Parser::ParseDense(const Shape& shape, Array& array, int level, int64_t& next) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  const Token open = lexer_.token();
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' in the literal of shape " + shape.ToString()));
  const bool innermost = level == shape.rank() - 1;
  int64_t count = 0;
  const int64_t want = shape.dims[static_cast<size_t>(level)];
  while (lexer_.kind() != Tok::kRbrace) {
    if (EatIf(Tok::kComma)) continue;
    if (count >= want) {
      return ErrorHere("more than " + std::to_string(want) + " elements in dimension " +
                       std::to_string(level) + " of a literal of shape " + shape.ToString());
    }
    if (innermost) {
      TPUEMU_RETURN_IF_ERROR(ParseElement(shape, array, next++));
    } else {
      TPUEMU_RETURN_IF_ERROR(ParseDense(shape, array, level + 1, next));
    }
    ++count;
  }
  if (count != want) {
    return ErrorAt(open.line, open.column,
                   "expected " + std::to_string(want) + " elements in dimension " +
                       std::to_string(level) + " of a literal of shape " + shape.ToString() +
                       ", found " + std::to_string(count));
  }
  lexer_.Lex();
  --depth_;
  return Status::Ok();
}

Status Parser::ParseElement(const Shape& shape, Array& array, int64_t k) {
  const Token& t = lexer_.token();
  const PrimitiveType type = shape.type;
  const auto i = static_cast<size_t>(k);
  if (IsFloating(type)) {
    double v = 0;
    if (t.kind == Tok::kInt) {
      v = static_cast<double>(t.int_value);
    } else if (t.kind == Tok::kDecimal) {
      v = t.decimal_value;
    } else if (AtIdent("inf")) {
      v = std::numeric_limits<double>::infinity();
    } else if (t.kind == Tok::kNegInf) {
      v = -std::numeric_limits<double>::infinity();
    } else {
      return Expected("a number for element type " + std::string(PrimitiveTypeName(type)));
    }
    if (std::isfinite(v) && std::fabs(v) >= Overflow(type)) {
      return ErrorHere("value " + std::string(t.text) + " is out of range for " +
                       std::string(PrimitiveTypeName(type)));
    }
    array.f[i] = RoundToType(type, static_cast<float>(v));
  } else if (AtIdent("true") || AtIdent("false")) {
    if (type != PrimitiveType::kPred) return Expected("an integer for " + shape.ToString());
    array.i[i] = t.text == "true" ? 1 : 0;
  } else if (t.kind == Tok::kInt) {
    const bool above_int64_max = t.int_value < 0 && t.text[0] != '-';
    if (!IntInRange(type, t.int_value, above_int64_max)) {
      return ErrorHere("value " + std::string(t.text) + " is out of range for " +
                       std::string(PrimitiveTypeName(type)));
    }
    array.i[i] = CanonicalInt(type, t.int_value);
  } else {
    return Expected("an integer for element type " + std::string(PrimitiveTypeName(type)));
  }
  lexer_.Lex();
  return Status::Ok();
}

}  // namespace tpuemu::engine::hlo::internal
