#include "engine/hlo/lexer.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace tpuemu::engine::hlo {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsIdentChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '_' || c == '.' || c == '-'; }

// Length of the longest prefix of s made of characters in `set` (at least `min` or 0).
size_t SpanOf(std::string_view s, size_t at, std::string_view set, size_t min) {
  size_t n = 0;
  while (at + n < s.size() && set.find(s[at + n]) != std::string_view::npos) ++n;
  return n >= min ? n : 0;
}

// [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,} at s[at]; returns its length or 0.
size_t MatchDimLabels(std::string_view s, size_t at) {
  size_t p = at;
  size_t n = SpanOf(s, p, "0123456789bf?", 2);
  if (n == 0) return 0;
  p += n;
  if (p >= s.size() || s[p] != '_') return 0;
  n = SpanOf(s, ++p, "0123456789io?", 2);
  if (n == 0) return 0;
  p += n;
  if (s.substr(p, 2) != "->") return 0;
  n = SpanOf(s, p += 2, "0123456789bf?", 2);
  return n == 0 ? 0 : p + n - at;
}

size_t Digits(std::string_view s, size_t at) { return SpanOf(s, at, "0123456789", 1); }

// -?((\d+|\d+\.\d*|\d*\.\d+)[eE][+-]?\d+) | -?(\d+\.\d*|\d*\.\d+)
size_t MatchFloat(std::string_view s, size_t at) {
  size_t p = at;
  if (p < s.size() && s[p] == '-') ++p;
  const size_t int_digits = Digits(s, p);
  size_t q = p + int_digits;
  bool has_point = false;
  size_t frac_digits = 0;
  if (q < s.size() && s[q] == '.') {
    has_point = true;
    frac_digits = Digits(s, q + 1);
    q += 1 + frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return 0;
  if (q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
    size_t e = q + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    const size_t exp_digits = Digits(s, e);
    if (exp_digits > 0) return e + exp_digits - at;
  }
  return has_point ? q - at : 0;
}

// \d+(x\d+)+
size_t MatchDxD(std::string_view s, size_t at) {
  size_t p = at + Digits(s, at);
  if (p == at) return 0;
  int groups = 0;
  while (p < s.size() && s[p] == 'x') {
    const size_t n = Digits(s, p + 1);
    if (n == 0) break;
    p += 1 + n;
    ++groups;
  }
  return groups > 0 ? p - at : 0;
}

// -?\d+
size_t MatchInt(std::string_view s, size_t at) {
  const size_t sign = at < s.size() && s[at] == '-' ? 1 : 0;
  const size_t n = Digits(s, at + sign);
  return n == 0 ? 0 : sign + n;
}

// -?\d+_-?\d+(_\d+)?(x-?\d+_-?\d+(_\d+)?)*
size_t MatchPad(std::string_view s, size_t at) {
  auto one = [&](size_t p) -> size_t {
    size_t n = MatchInt(s, p);
    if (n == 0 || p + n >= s.size() || s[p + n] != '_') return 0;
    size_t q = p + n + 1;
    n = MatchInt(s, q);
    if (n == 0) return 0;
    q += n;
    if (q < s.size() && s[q] == '_') {
      const size_t m = Digits(s, q + 1);
      if (m > 0) q += 1 + m;
    }
    return q - p;
  };
  size_t p = at;
  size_t n = one(p);
  if (n == 0) return 0;
  p += n;
  while (p < s.size() && s[p] == 'x') {
    n = one(p + 1);
    if (n == 0) break;
    p += 1 + n;
  }
  return p - at;
}

}  // namespace

void Lexer::Advance(size_t n) {
  const size_t end = std::min(pos_ + n, text_.size());
  for (; pos_ < end; ++pos_) {
    if (text_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
  }
}

Tok Lexer::Lex() {
  token_.kind = LexToken();
  return token_.kind;
}

Tok Lexer::LookAhead() {
  if (token_.kind == Tok::kEof || token_.kind == Tok::kError) return token_.kind;
  const Token saved = token_;
  const size_t pos = pos_;
  const int line = line_;
  const size_t line_start = line_start_;
  const Tok next = Lex();
  token_ = saved;
  pos_ = pos;
  line_ = line;
  line_start_ = line_start;
  return next;
}

bool Lexer::SkipComment() {
  if (Peek(1) == '*') {
    const size_t end = text_.find("*/", pos_ + 2);
    if (end == std::string_view::npos) return false;
    Advance(end + 2 - pos_);
    return true;
  }
  while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
  return true;
}

Tok Lexer::LexToken() {
  while (true) {
    // Skip whitespace and comments.
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        ++pos_;
        ++line_;
        line_start_ = pos_;
      } else {
        break;
      }
    }
    token_.offset = pos_;
    token_.line = line_;
    token_.column = static_cast<int>(pos_ - line_start_) + 1;
    token_.text = {};
    if (pos_ >= text_.size()) return Tok::kEof;
    const char c = text_[pos_];
    if (c == '/' && (Peek(1) == '*' || Peek(1) == '/')) {
      if (!SkipComment()) return Tok::kError;
      continue;
    }
    if (IsAlpha(c) || c == '_') return LexIdentifierOrPattern();
    if (IsDigit(c) || c == '-' || c == '?') {
      if (c == '-' && Peek(1) == '>') {
        pos_ += 2;
        return Tok::kArrow;
      }
      const Tok t = LexNumberOrPattern();
      if (t == Tok::kError && c == '?') {
        ++pos_;
        return Tok::kQuestion;
      }
      return t;
    }
    ++pos_;
    switch (c) {
      case '=':
        return Tok::kEqual;
      case ',':
        return Tok::kComma;
      case ':':
        return Tok::kColon;
      case '*':
        return Tok::kAsterisk;
      case '#':
        return Tok::kOctothorp;
      case '+':
        return Tok::kPlus;
      case '~':
        return Tok::kTilde;
      case '[':
        return Tok::kLsquare;
      case ']':
        return Tok::kRsquare;
      case '{':
        return Tok::kLbrace;
      case '}':
        return Tok::kRbrace;
      case '(':
        return Tok::kLparen;
      case ')':
        return Tok::kRparen;
      case '<':
        if (Peek() == '=') {
          ++pos_;
          return Tok::kLeq;
        }
        return Tok::kError;
      case '.':
        if (Peek() == '.' && Peek(1) == '.') {
          pos_ += 2;
          return Tok::kDots;
        }
        return Tok::kError;
      case '%': {
        const size_t start = pos_;
        if (!(IsAlpha(Peek()) || Peek() == '_')) return Tok::kError;
        while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
        token_.text = text_.substr(start, pos_ - start);
        return Tok::kName;
      }
      case '"':
      case '\'':
        --pos_;
        return LexString(c);
      default:
        --pos_;
        return Tok::kError;
    }
  }
}

Tok Lexer::LexIdentifierOrPattern() {
  const size_t start = pos_;
  while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
  const std::string_view ident = text_.substr(start, pos_ - start);
  if (Peek() == ':') {
    token_.text = ident;
    ++pos_;
    return Tok::kName;
  }
  if (Peek() == '=') {
    token_.text = ident;
    ++pos_;
    return Tok::kAttributeName;
  }
  if (ident == "nan") {
    token_.decimal_value = std::numeric_limits<double>::quiet_NaN();
    if (Peek() == '(') {  // nan(0x...) payload: accepted, the value stays a quiet NaN
      const size_t close = text_.find(')', pos_);
      if (close == std::string_view::npos) return Tok::kError;
      pos_ = close + 1;
    }
    token_.text = text_.substr(start, pos_ - start);
    return Tok::kDecimal;
  }
  if (const size_t n = MatchDimLabels(text_, start); n > 0) {
    pos_ = start + n;
    token_.text = text_.substr(start, n);
    return Tok::kDimLabels;
  }
  token_.text = ident;
  return Tok::kIdent;
}

Tok Lexer::LexNumberOrPattern() {
  const size_t start = pos_;
  auto take = [&](size_t n, Tok kind) {
    pos_ = start + n;
    token_.text = text_.substr(start, n);
    return kind;
  };
  if (const size_t n = MatchFloat(text_, start); n > 0) {
    const std::string_view s = text_.substr(start, n);
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ptr != s.data() + s.size() && ec != std::errc::result_out_of_range) return Tok::kError;
    if (ec == std::errc::result_out_of_range) {
      // Overflow is an infinity (the parser rejects it); underflow rounds to a signed zero.
      v = std::strtod(std::string(s).c_str(), nullptr);
    }
    token_.decimal_value = v;
    return take(n, Tok::kDecimal);
  }
  if (const size_t n = MatchDimLabels(text_, start); n > 0) return take(n, Tok::kDimLabels);
  if (const size_t n = MatchDxD(text_, start); n > 0) return take(n, Tok::kDxD);
  if (const size_t n = MatchPad(text_, start); n > 0) return take(n, Tok::kPad);
  if (const size_t n = MatchInt(text_, start); n > 0) {
    const std::string_view s = text_.substr(start, n);
    if (s[0] == '-') {
      int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || ptr != s.data() + s.size()) return Tok::kError;
      token_.int_value = v;
    } else {
      uint64_t v = 0;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || ptr != s.data() + s.size()) return Tok::kError;
      token_.int_value = static_cast<int64_t>(v);
    }
    return take(n, Tok::kInt);
  }
  if (text_.substr(start, 4) == "-inf") return take(4, Tok::kNegInf);
  if (text_.substr(start, 4) == "-nan") {
    size_t n = 4;
    if (start + n < text_.size() && text_[start + n] == '(') {
      const size_t close = text_.find(')', start + n);
      if (close == std::string_view::npos) return Tok::kError;
      n = close + 1 - start;
    }
    token_.decimal_value = -std::numeric_limits<double>::quiet_NaN();
    return take(n, Tok::kDecimal);
  }
  return Tok::kError;
}

Tok Lexer::LexString(char quote) {
  const size_t start = pos_;
  size_t p = pos_ + 1;
  while (p < text_.size() && text_[p] != quote) {
    if (text_[p] == '\\') ++p;
    ++p;
  }
  if (p >= text_.size()) return Tok::kError;
  Advance(p + 1 - pos_);
  token_.text = text_.substr(start + 1, p - start - 1);
  return Tok::kString;
}

bool Lexer::SkipValue(std::string_view* raw) {
  const size_t start = token_.offset;
  pos_ = token_.offset;
  line_ = token_.line;
  line_start_ = token_.offset - static_cast<size_t>(token_.column - 1);
  int depth = 0;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '"' || c == '\'') {
      if (LexString(c) != Tok::kString) {
        token_.kind = Tok::kError;
        return false;
      }
      continue;
    }
    if (depth == 0 && (c == ',' || c == ')' || c == '}' || c == ']' || c == '\n')) break;
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    Advance(1);
  }
  if (depth != 0) {
    token_.kind = Tok::kError;
    return false;
  }
  if (raw != nullptr) *raw = text_.substr(start, pos_ - start);
  Lex();
  return true;
}

std::string_view Lexer::LineText(int line) const {
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    const size_t nl = text_.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  const size_t end = text_.find('\n', start);
  return text_.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
}

}  // namespace tpuemu::engine::hlo
