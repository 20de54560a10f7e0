// Shapes and layouts: f32[8,<=16]{1,0:T(8,128)}, (f32[], s32[2]), token[].
#include "engine/hlo/parser_internal.h"

namespace tpuemu::engine::hlo::internal {

bool Parser::CanBeShape() {
  if (lexer_.kind() == Tok::kLparen) return true;
  // An element type followed by '[': an instruction may be named like a type ("s1").
  return lexer_.kind() == Tok::kIdent && ParsePrimitiveType(lexer_.token().text).has_value() &&
         lexer_.LookAhead() == Tok::kLsquare;
}

// shape ::= '(' [shape (',' shape)*] ')' | type '[' [dim (',' dim)*] ']' [layout]
// dim ::= int | '<=' int | '?'
Status Parser::ParseShape(Shape& shape) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  if (EatIf(Tok::kLparen)) {
    shape = Shape::Tuple({});
    if (!EatIf(Tok::kRparen)) {
      do {
        shape.tuple.emplace_back();
        TPUEMU_RETURN_IF_ERROR(ParseShape(shape.tuple.back()));
      } while (EatIf(Tok::kComma));
      TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRparen, "')' to end the tuple shape"));
    }
    --depth_;
    return Status::Ok();
  }
  std::optional<PrimitiveType> type;
  if (lexer_.kind() == Tok::kIdent) type = ParsePrimitiveType(lexer_.token().text);
  if (!type) return Expected("a shape (an element type such as f32, or '(')");
  shape = Shape::Array(*type, {});
  lexer_.Lex();
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLsquare, "'[' after the element type"));
  if (!EatIf(Tok::kRsquare)) {
    do {
      bool dynamic = false;
      int64_t d = 0;
      if (EatIf(Tok::kQuestion)) {
        dynamic = true;
        d = kUnbounded;
      } else {
        dynamic = EatIf(Tok::kLeq);
        TPUEMU_RETURN_IF_ERROR(Int(d, "a dimension size"));
        if (d < 0) return ErrorHere("a dimension size must not be negative");
      }
      shape.dims.push_back(d);
      shape.dynamic.push_back(dynamic);
    } while (EatIf(Tok::kComma));
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRsquare, "']' or ',' in the dimensions"));
  }
  // '{' starts a layout only when an integer, ':' or '}' (the empty layout of old dumps, `f32[]{}`)
  // follows; otherwise it opens a computation body.
  if (lexer_.kind() == Tok::kLbrace) {
    const Tok next = lexer_.LookAhead();
    if (next == Tok::kInt || next == Tok::kColon || next == Tok::kRbrace) {
      TPUEMU_RETURN_IF_ERROR(ParseLayout(shape));
    }
  }
  --depth_;
  return Status::Ok();
}

// '{' minor_to_major [':' tiles, memory space, ... (skipped)] '}'
Status Parser::ParseLayout(Shape& shape) {
  lexer_.Lex();
  if (lexer_.kind() == Tok::kInt) {
    do {
      int64_t d = 0;
      TPUEMU_RETURN_IF_ERROR(Int(d, "a layout dimension"));
      shape.minor_to_major.push_back(d);
    } while (EatIf(Tok::kComma));
  }
  if (lexer_.kind() == Tok::kColon) {
    lexer_.Lex();
    if (lexer_.kind() != Tok::kRbrace && !lexer_.SkipValue()) {
      return ErrorHere("unterminated layout");
    }
  }
  if (shape.minor_to_major.size() != shape.dims.size() && !shape.minor_to_major.empty()) {
    return ErrorHere("the layout of " + shape.ToString() + " lists " +
                     std::to_string(shape.minor_to_major.size()) + " dimensions");
  }
  std::vector<bool> seen(shape.dims.size(), false);
  for (int64_t d : shape.minor_to_major) {
    if (d < 0 || d >= shape.rank() || seen[static_cast<size_t>(d)]) {
      return ErrorHere("the layout of " + shape.ToString() + " is not a permutation of its dims");
    }
    seen[static_cast<size_t>(d)] = true;
  }
  return Expect(Tok::kRbrace, "'}' to end the layout");
}

}  // namespace tpuemu::engine::hlo::internal
