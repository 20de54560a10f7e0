// Tokenizer for MLIR text as StableHLO modules are printed (jax.jit(f).lower(x).as_text(),
// torch_xla's get_stablehlo_text(), stablehlo-opt): %values (with #N result uses), @symbols,
// ^blocks, #attributes, !types, bare identifiers (dots allowed: stablehlo.add), strings, integers
// (decimal and 0x hex), floats, and punctuation. // comments and whitespace are skipped. Every
// token carries its 1-based line and column.
//
// Tensor types are not tokenized: the parser reads their body as raw text (RawAngle) because
// "2x3xf32" is one word to MLIR. Token text is a view into the input, which must outlive the
// lexer. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tpuemu::engine::stablehlo {

enum class Tok {
  kEof,
  kError,
  kValue,   // %name or %name#N (text: name; result_index: N or -1)
  kSymbol,  // @name or @"name" (text: name, escapes kept)
  kBlock,   // ^bb0 (text without ^)
  kHash,    // #name, #stablehlo.gather (text without #)
  kBang,    // !stablehlo.token (text without !)
  kIdent,   // bare identifier: letters, digits, _ $ . (stablehlo.add, f32, dense, x, DEFAULT)
  kString,  // "..." (text: the raw content between the quotes)
  kInt,     // 12, -3, 0x7FC00000
  kFloat,   // 1.5, -2.0e+00
  kLparen,
  kRparen,
  kLsquare,
  kRsquare,
  kLbrace,
  kRbrace,
  kLess,
  kGreater,
  kColon,
  kComma,
  kEqual,
  kArrow,  // ->
  kStar,
  kQuestion,
  kPlus,
  kMinus,  // a '-' not starting a number
};

std::string TokName(Tok kind);

struct Token {
  Tok kind = Tok::kEof;
  std::string_view text;
  int result_index = -1;  // kValue: the N of %x#N
  int line = 1;
  int column = 1;
  size_t offset = 0;
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Tok Lex();
  const Token& token() const { return token_; }
  Tok kind() const { return token_.kind; }
  // At the current token (which must be the identifier before it, e.g. `tensor`), reads the
  // '<' ... '>' that follows as raw text, nesting-aware, into *body (without the brackets).
  // Does not lex the next token. False on a missing or unterminated bracket.
  bool RawAngle(std::string_view* body);
  // The next non-space character after the current token ('\0' at the end).
  char PeekChar();
  // The text of line `line` (1-based), for error messages.
  std::string_view LineText(int line) const;
  size_t position() const { return pos_; }

 private:
  void SkipSpaceAndComments();
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void Advance(size_t n);
  Tok Number();

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  Token token_;
};

// Unescapes the content of a kString token (\n \t \" \\ and \HH hex pairs, as MLIR prints them).
std::string Unescape(std::string_view raw);

}  // namespace tpuemu::engine::stablehlo
