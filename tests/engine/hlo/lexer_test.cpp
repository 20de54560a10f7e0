// The lexer against XLA's token rules: names, attribute names, numbers and the dxd / pad /
// dim-label patterns, strings with escapes, comments, and positions.
#include "engine/hlo/lexer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tpuemu::engine::hlo {
namespace {

std::vector<Tok> Kinds(std::string_view text) {
  Lexer lexer(text);
  std::vector<Tok> kinds;
  while (true) {
    const Tok t = lexer.Lex();
    kinds.push_back(t);
    if (t == Tok::kEof || t == Tok::kError) return kinds;
  }
}

TEST(HloLexer, NamesAttributeNamesAndIdentifiers) {
  Lexer lexer("%fusion.12 x: window= ROOT add-dependency");
  EXPECT_EQ(lexer.Lex(), Tok::kName);
  EXPECT_EQ(lexer.token().text, "fusion.12");
  EXPECT_EQ(lexer.Lex(), Tok::kName);
  EXPECT_EQ(lexer.token().text, "x");
  EXPECT_EQ(lexer.Lex(), Tok::kAttributeName);
  EXPECT_EQ(lexer.token().text, "window");
  EXPECT_EQ(lexer.Lex(), Tok::kIdent);
  EXPECT_EQ(lexer.token().text, "ROOT");
  EXPECT_EQ(lexer.Lex(), Tok::kIdent);
  EXPECT_EQ(lexer.token().text, "add-dependency");
  EXPECT_EQ(lexer.Lex(), Tok::kEof);
}

TEST(HloLexer, NumbersAndPatterns) {
  Lexer lexer(
      "42 -7 3.5 1e-3 -2.5E+2 3x3x1 0_1x2_2_1 -1_-1 b01f_01io->b01f 0bf_0io->0bf "
      "18446744073709551615");
  EXPECT_EQ(lexer.Lex(), Tok::kInt);
  EXPECT_EQ(lexer.token().int_value, 42);
  EXPECT_EQ(lexer.Lex(), Tok::kInt);
  EXPECT_EQ(lexer.token().int_value, -7);
  EXPECT_EQ(lexer.Lex(), Tok::kDecimal);
  EXPECT_DOUBLE_EQ(lexer.token().decimal_value, 3.5);
  EXPECT_EQ(lexer.Lex(), Tok::kDecimal);
  EXPECT_DOUBLE_EQ(lexer.token().decimal_value, 1e-3);
  EXPECT_EQ(lexer.Lex(), Tok::kDecimal);
  EXPECT_DOUBLE_EQ(lexer.token().decimal_value, -250.0);
  EXPECT_EQ(lexer.Lex(), Tok::kDxD);
  EXPECT_EQ(lexer.token().text, "3x3x1");
  EXPECT_EQ(lexer.Lex(), Tok::kPad);
  EXPECT_EQ(lexer.token().text, "0_1x2_2_1");
  EXPECT_EQ(lexer.Lex(), Tok::kPad);
  EXPECT_EQ(lexer.token().text, "-1_-1");
  EXPECT_EQ(lexer.Lex(), Tok::kDimLabels);
  EXPECT_EQ(lexer.token().text, "b01f_01io->b01f");
  EXPECT_EQ(lexer.Lex(), Tok::kDimLabels);
  EXPECT_EQ(lexer.token().text, "0bf_0io->0bf");
  EXPECT_EQ(lexer.Lex(), Tok::kInt);
  EXPECT_EQ(static_cast<uint64_t>(lexer.token().int_value), 18446744073709551615ull);
}

TEST(HloLexer, NonFiniteValues) {
  Lexer lexer("nan -nan inf -inf nan(0x7f)");
  EXPECT_EQ(lexer.Lex(), Tok::kDecimal);
  EXPECT_TRUE(std::isnan(lexer.token().decimal_value));
  EXPECT_EQ(lexer.Lex(), Tok::kDecimal);
  EXPECT_TRUE(std::isnan(lexer.token().decimal_value));
  EXPECT_EQ(lexer.Lex(), Tok::kIdent);  // inf is a keyword the parser reads
  EXPECT_EQ(lexer.Lex(), Tok::kNegInf);
  EXPECT_EQ(lexer.Lex(), Tok::kDecimal);
  EXPECT_EQ(lexer.Lex(), Tok::kEof);
}

TEST(HloLexer, PunctuationArrowLeqDots) {
  EXPECT_EQ(Kinds("( ) { } [ ] , = : -> <= ... * # + ~ ?"),
            (std::vector<Tok>{Tok::kLparen, Tok::kRparen, Tok::kLbrace, Tok::kRbrace, Tok::kLsquare,
                              Tok::kRsquare, Tok::kComma, Tok::kEqual, Tok::kColon, Tok::kArrow,
                              Tok::kLeq, Tok::kDots, Tok::kAsterisk, Tok::kOctothorp, Tok::kPlus,
                              Tok::kTilde, Tok::kQuestion, Tok::kEof}));
}

TEST(HloLexer, StringsWithEscapesAndComments) {
  Lexer lexer("/* block\n comment */ \"a\\\"b\\n\" // line comment\n 'x'");
  EXPECT_EQ(lexer.Lex(), Tok::kString);
  EXPECT_EQ(Unescape(lexer.token().text), "a\"b\n");
  EXPECT_EQ(lexer.token().line, 2);
  EXPECT_EQ(lexer.Lex(), Tok::kString);
  EXPECT_EQ(lexer.token().text, "x");
  EXPECT_EQ(lexer.token().line, 3);
  EXPECT_EQ(Unescape("\\x41\\101\\t"), "AA\t");
}

TEST(HloLexer, LinesAndColumnsAreOneBased) {
  Lexer lexer("a\n  %b = c");
  lexer.Lex();
  EXPECT_EQ(lexer.token().line, 1);
  EXPECT_EQ(lexer.token().column, 1);
  lexer.Lex();
  EXPECT_EQ(lexer.token().line, 2);
  EXPECT_EQ(lexer.token().column, 3);
  EXPECT_EQ(lexer.LineText(2), "  %b = c");
}

TEST(HloLexer, ErrorsOnUnterminatedInput) {
  EXPECT_EQ(Kinds("\"open").back(), Tok::kError);
  EXPECT_EQ(Kinds("/* open").back(), Tok::kError);
  EXPECT_EQ(Kinds("@").back(), Tok::kError);
  EXPECT_EQ(Kinds("a / b").back(), Tok::kError);
}

TEST(HloLexer, SkipValueStopsAtTopLevelCommaNewlineOrClose) {
  Lexer lexer("sharding={devices=[2,1]<=[2], last_tile_dim_replicate}, next=1\nx");
  lexer.Lex();  // sharding=
  lexer.Lex();  // '{'
  std::string_view raw;
  ASSERT_TRUE(lexer.SkipValue(&raw));
  EXPECT_EQ(raw, "{devices=[2,1]<=[2], last_tile_dim_replicate}");
  EXPECT_EQ(lexer.kind(), Tok::kComma);
  lexer.Lex();
  lexer.Lex();  // 1
  ASSERT_TRUE(lexer.SkipValue(&raw));
  EXPECT_EQ(raw, "1");
  EXPECT_EQ(lexer.token().text, "x");
  Lexer open("{ unbalanced");
  open.Lex();
  EXPECT_FALSE(open.SkipValue());
}

}  // namespace
}  // namespace tpuemu::engine::hlo
