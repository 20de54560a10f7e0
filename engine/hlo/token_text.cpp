// The text side of tokens: how error messages name a token kind, and string unescaping.
#include <cctype>

#include "engine/hlo/lexer.h"

namespace tpuemu::engine::hlo {

std::string TokName(Tok kind) {
  switch (kind) {
    case Tok::kEof:
      return "end of input";
    case Tok::kError:
      return "an invalid token";
    case Tok::kEqual:
      return "'='";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kAsterisk:
      return "'*'";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kOctothorp:
      return "'#'";
    case Tok::kPlus:
      return "'+'";
    case Tok::kTilde:
      return "'~'";
    case Tok::kLsquare:
      return "'['";
    case Tok::kRsquare:
      return "']'";
    case Tok::kLbrace:
      return "'{'";
    case Tok::kRbrace:
      return "'}'";
    case Tok::kLparen:
      return "'('";
    case Tok::kRparen:
      return "')'";
    case Tok::kArrow:
      return "'->'";
    case Tok::kLeq:
      return "'<='";
    case Tok::kDots:
      return "'...'";
    case Tok::kName:
      return "a name";
    case Tok::kAttributeName:
      return "an attribute name";
    case Tok::kIdent:
      return "an identifier";
    case Tok::kString:
      return "a string";
    case Tok::kInt:
      return "an integer";
    case Tok::kDecimal:
      return "a number";
    case Tok::kNegInf:
      return "'-inf'";
    case Tok::kDimLabels:
      return "dim labels";
    case Tok::kDxD:
      return "a NxM pattern";
    case Tok::kPad:
      return "a padding pattern";
  }
  return "a token";
}

std::string Unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 >= raw.size()) {
      out += raw[i];
      continue;
    }
    const char e = raw[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && i + 1 < raw.size() &&
               std::isxdigit(static_cast<unsigned char>(raw[i + 1]))) {
          const char h = raw[++i];
          v = v * 16 +
              (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
          ++n;
        }
        out += static_cast<char>(v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0', n = 1;
          while (n < 3 && i + 1 < raw.size() && raw[i + 1] >= '0' && raw[i + 1] <= '7') {
            v = v * 8 + (raw[++i] - '0');
            ++n;
          }
          out += static_cast<char>(v);
        } else {
          out += e;  // \" \' \\ \? and anything else: the character itself
        }
    }
  }
  return out;
}

}  // namespace tpuemu::engine::hlo
