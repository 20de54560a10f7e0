// Tokenizer for HLO text, following XLA's lexer (xla/hlo/parser/hlo_lexer.cc) token for token:
// `%name` and `name:` are kName, `name=` is kAttributeName, numbers, dim labels (b01f_01io->b01f),
// DxD patterns (3x3), pad patterns (0_1x2_2_1), strings with C escapes, `...`, `->`, `<=`,
// punctuation; /* */ and // comments and whitespace are skipped. Every token carries its 1-based
// line and column.
//
// Token text is a view into the input, which must outlive the lexer. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tpuemu::engine::hlo {

enum class Tok {
  kEof,
  kError,
  kEqual,
  kComma,
  kColon,
  kAsterisk,
  kQuestion,
  kOctothorp,
  kPlus,
  kTilde,
  kLsquare,
  kRsquare,
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kArrow,          // ->
  kLeq,            // <=
  kDots,           // ...
  kName,           // %foo or foo: (text without the sigil / colon)
  kAttributeName,  // foo= (text without '=')
  kIdent,          // any other identifier, keywords and type names included
  kString,         // "..." or '...' (text: the raw content between the quotes)
  kInt,
  kDecimal,  // also nan, -nan, nan(0x..)
  kNegInf,   // -inf
  kDimLabels,
  kDxD,
  kPad,
};

// "'{'", "an attribute name", ...: how errors describe a token kind.
std::string TokName(Tok kind);

struct Token {
  Tok kind = Tok::kEof;
  std::string_view text;  // see Tok
  int64_t int_value = 0;  // kInt (u64 values above int64 max keep their bit pattern)
  double decimal_value = 0;
  int line = 1;
  int column = 1;
  size_t offset = 0;  // byte offset of the token's first character
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // Advances to the next token and returns its kind.
  Tok Lex();
  const Token& token() const { return token_; }
  Tok kind() const { return token_.kind; }
  // The kind of the token after the current one, without consuming anything.
  Tok LookAhead();
  // Skips the value of an attribute the importer ignores, starting at the current token: raw
  // characters up to the first ',' ')' '}' ']' or newline outside brackets and strings. Then lexes
  // the token after it. False (current token kError) on an unterminated bracket or string.
  // `raw`, when given, receives the skipped text.
  bool SkipValue(std::string_view* raw = nullptr);
  // The full text of line `line` (1-based), for error messages.
  std::string_view LineText(int line) const;

 private:
  Tok LexToken();
  Tok LexIdentifierOrPattern();
  Tok LexNumberOrPattern();
  Tok LexString(char quote);
  bool SkipComment();  // at '/': skips a comment; false if unterminated
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void Advance(size_t n);  // moves pos_, counting newlines

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  Token token_;
};

// Unescapes the content of a kString token (C escapes: \n \t \" \\ \' \xHH \ooo ...).
std::string Unescape(std::string_view raw);

}  // namespace tpuemu::engine::hlo
