#include "engine/stablehlo/lexer.h"

#include <cctype>

namespace tpuemu::engine::stablehlo {
namespace {

bool IdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}
bool IdStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string TokName(Tok kind) {
  switch (kind) {
    case Tok::kEof:
      return "the end of the text";
    case Tok::kError:
      return "an invalid token";
    case Tok::kValue:
      return "a %value";
    case Tok::kSymbol:
      return "an @symbol";
    case Tok::kBlock:
      return "a ^block";
    case Tok::kHash:
      return "a #attribute";
    case Tok::kBang:
      return "a !type";
    case Tok::kIdent:
      return "an identifier";
    case Tok::kString:
      return "a string";
    case Tok::kInt:
      return "an integer";
    case Tok::kFloat:
      return "a number";
    case Tok::kLparen:
      return "'('";
    case Tok::kRparen:
      return "')'";
    case Tok::kLsquare:
      return "'['";
    case Tok::kRsquare:
      return "']'";
    case Tok::kLbrace:
      return "'{'";
    case Tok::kRbrace:
      return "'}'";
    case Tok::kLess:
      return "'<'";
    case Tok::kGreater:
      return "'>'";
    case Tok::kColon:
      return "':'";
    case Tok::kComma:
      return "','";
    case Tok::kEqual:
      return "'='";
    case Tok::kArrow:
      return "'->'";
    case Tok::kStar:
      return "'*'";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kPlus:
      return "'+'";
    case Tok::kMinus:
      return "'-'";
  }
  return "a token";
}

void Lexer::Advance(size_t n) {
  for (size_t k = 0; k < n && pos_ < text_.size(); ++k) {
    if (text_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '\n') {
      ++line_;
      line_start_ = ++pos_;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '/' && Peek(1) == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

char Lexer::PeekChar() {
  SkipSpaceAndComments();
  return Peek();
}

std::string_view Lexer::LineText(int line) const {
  size_t start = 0;
  for (int l = 1; l < line && start < text_.size(); ++start) {
    if (text_[start] == '\n') ++l;
  }
  size_t end = text_.find('\n', start);
  if (end == std::string_view::npos) end = text_.size();
  return text_.substr(start, end - start);
}

Tok Lexer::Number() {
  const size_t start = pos_;
  if (Peek() == '-' || Peek() == '+') ++pos_;
  if (Peek() == '0' && (Peek(1) == 'x' || Peek(1) == 'X') && HexDigit(Peek(2)) >= 0) {
    pos_ += 2;
    while (HexDigit(Peek()) >= 0) ++pos_;
    token_.text = text_.substr(start, pos_ - start);
    return token_.kind = Tok::kInt;
  }
  bool is_float = false;
  while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
  if (Peek() == '.' && std::isdigit(static_cast<unsigned char>(Peek(1)))) {
    is_float = true;
    ++pos_;
    while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
  } else if (Peek() == '.' && !IdStart(Peek(1))) {
    is_float = true;  // "1." as some printers write it
    ++pos_;
  }
  if ((Peek() == 'e' || Peek() == 'E') &&
      (std::isdigit(static_cast<unsigned char>(Peek(1))) ||
       ((Peek(1) == '+' || Peek(1) == '-') && std::isdigit(static_cast<unsigned char>(Peek(2)))))) {
    is_float = true;
    pos_ += 2;
    while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
  }
  token_.text = text_.substr(start, pos_ - start);
  return token_.kind = is_float ? Tok::kFloat : Tok::kInt;
}

Tok Lexer::Lex() {
  SkipSpaceAndComments();
  token_ = Token{};
  token_.line = line_;
  token_.column = static_cast<int>(pos_ - line_start_) + 1;
  token_.offset = pos_;
  if (pos_ >= text_.size()) return token_.kind = Tok::kEof;
  const char c = text_[pos_];
  auto single = [&](Tok kind) {
    token_.text = text_.substr(pos_, 1);
    ++pos_;
    return token_.kind = kind;
  };
  auto word = [&](size_t from) {  // identifier characters from `from`
    size_t end = from;
    while (end < text_.size() && IdChar(text_[end])) ++end;
    return end;
  };
  switch (c) {
    case '(':
      return single(Tok::kLparen);
    case ')':
      return single(Tok::kRparen);
    case '[':
      return single(Tok::kLsquare);
    case ']':
      return single(Tok::kRsquare);
    case '{':
      return single(Tok::kLbrace);
    case '}':
      return single(Tok::kRbrace);
    case '<':
      return single(Tok::kLess);
    case '>':
      return single(Tok::kGreater);
    case ':':
      return single(Tok::kColon);
    case ',':
      return single(Tok::kComma);
    case '=':
      return single(Tok::kEqual);
    case '*':
      return single(Tok::kStar);
    case '?':
      return single(Tok::kQuestion);
    case '+':
      return single(Tok::kPlus);
    default:
      break;
  }
  if (c == '-') {
    if (Peek(1) == '>') {
      token_.text = text_.substr(pos_, 2);
      pos_ += 2;
      return token_.kind = Tok::kArrow;
    }
    if (std::isdigit(static_cast<unsigned char>(Peek(1)))) return Number();
    return single(Tok::kMinus);
  }
  if (std::isdigit(static_cast<unsigned char>(c))) return Number();
  if (c == '"') {
    size_t end = pos_ + 1;
    while (end < text_.size() && text_[end] != '"') {
      if (text_[end] == '\\') ++end;
      if (end < text_.size() && text_[end] == '\n') return token_.kind = Tok::kError;
      ++end;
    }
    if (end >= text_.size()) return token_.kind = Tok::kError;
    token_.text = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return token_.kind = Tok::kString;
  }
  if (c == '%' || c == '^' || c == '#' || c == '!') {
    size_t end = word(pos_ + 1);
    if (end == pos_ + 1) return token_.kind = Tok::kError;
    token_.text = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end;
    if (c == '%') {
      if (Peek() == '#' && std::isdigit(static_cast<unsigned char>(Peek(1)))) {
        int n = 0;
        ++pos_;
        while (std::isdigit(static_cast<unsigned char>(Peek())) && n < 1000000) {
          n = n * 10 + (Peek() - '0');
          ++pos_;
        }
        token_.result_index = n;
      }
      return token_.kind = Tok::kValue;
    }
    return token_.kind = c == '^' ? Tok::kBlock : c == '#' ? Tok::kHash : Tok::kBang;
  }
  if (c == '@') {
    if (Peek(1) == '"') {
      ++pos_;
      Tok k = Lex();
      if (k != Tok::kString) return token_.kind = Tok::kError;
      return token_.kind = Tok::kSymbol;
    }
    size_t end = word(pos_ + 1);
    if (end == pos_ + 1) return token_.kind = Tok::kError;
    token_.text = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end;
    return token_.kind = Tok::kSymbol;
  }
  if (IdStart(c)) {
    size_t end = word(pos_);
    token_.text = text_.substr(pos_, end - pos_);
    pos_ = end;
    return token_.kind = Tok::kIdent;
  }
  return token_.kind = Tok::kError;
}

bool Lexer::RawAngle(std::string_view* body) {
  SkipSpaceAndComments();
  if (Peek() != '<') return false;
  const size_t start = pos_ + 1;
  int depth = 0;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '<') ++depth;
    if (c == '>' && !(pos_ > 0 && text_[pos_ - 1] == '-')) {
      if (--depth == 0) {
        *body = text_.substr(start, pos_ - start);
        Advance(1);
        return true;
      }
    }
    if (c == '"') {  // a string inside (quantized types' names): skip it whole
      Advance(1);
      while (pos_ < text_.size() && text_[pos_] != '"') Advance(text_[pos_] == '\\' ? 2 : 1);
    }
    Advance(1);
  }
  return false;
}

std::string Unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t k = 0; k < raw.size(); ++k) {
    if (raw[k] != '\\' || k + 1 >= raw.size()) {
      out += raw[k];
      continue;
    }
    const char e = raw[++k];
    if (e == 'n') {
      out += '\n';
    } else if (e == 't') {
      out += '\t';
    } else if (e == '"' || e == '\\') {
      out += e;
    } else if (k + 1 < raw.size() && HexDigit(e) >= 0 && HexDigit(raw[k + 1]) >= 0) {
      out += static_cast<char>(HexDigit(e) * 16 + HexDigit(raw[k + 1]));
      ++k;
    } else {
      out += e;
    }
  }
  return out;
}

}  // namespace tpuemu::engine::stablehlo
