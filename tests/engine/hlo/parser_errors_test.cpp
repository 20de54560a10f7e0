// Every syntax error is INVALID_ARGUMENT naming the line, the column and what was expected; the
// limits on text size, instruction count and nesting are enforced with errors naming them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/hlo/parser.h"

namespace tpuemu::engine::hlo {
namespace {

using ::testing::HasSubstr;

struct SyntaxCase {
  const char* name;
  const char* text;
  const char* message;  // substring of the error
};

class SyntaxErrors : public ::testing::TestWithParam<SyntaxCase> {};

TEST_P(SyntaxErrors, NameLineColumnAndWhatWasExpected) {
  const SyntaxCase& c = GetParam();
  Result<Module> m = ParseModule(c.text);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr(c.message)) << m.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    HloParser, SyntaxErrors,
    ::testing::Values(
        SyntaxCase{"Empty", "", "line 1, column 1: expected a computation, found end of input"},
        SyntaxCase{"MissingEquals", "HloModule m\nENTRY e {\n  x f32[] parameter(0)\n}",
                   "line 3, column 5: expected '=' after the instruction name, found 'f32'"},
        SyntaxCase{"UnknownOpcode", "HloModule m\nENTRY e {\n  ROOT x = f32[] frobnicate()\n}",
                   "line 3, column 18: unknown opcode 'frobnicate'"},
        SyntaxCase{"UndefinedOperand", "HloModule m\nENTRY e {\n  ROOT x = f32[] negate(%y)\n}",
                   "line 3, column 25: operand %y of %x is not defined before it in %e"},
        SyntaxCase{"UndefinedComputation",
                   "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=%sum\n}",
                   "line 5, column 57: computation %sum is not defined before its use"},
        SyntaxCase{"BadElementType", "HloModule m\nENTRY e {\n  ROOT x = f31[] parameter(0)\n}",
                   "line 3, column 12: unknown opcode 'f31'"},
        SyntaxCase{"MissingBracket", "HloModule m\nENTRY e {\n  ROOT x = f32[2,3 parameter(0)\n}",
                   "line 3, column 20: expected ']' or ',' in the dimensions, found 'parameter'"},
        SyntaxCase{
            "UnterminatedString",
            "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), metadata={op_name=\"x}\n}",
            "line 3, column 50: expected a value, found an invalid character or unterminated "
            "string/comment"},
        SyntaxCase{"UnterminatedComment", "HloModule m /* never closed",
                   "line 1, column 13: expected a computation name, found an invalid character"},
        SyntaxCase{"LiteralCount",
                   "HloModule m\nENTRY e {\n  ROOT c = f32[2,2] constant({{1,2},{3}})\n}",
                   "line 3, column 37: expected 2 elements in dimension 1 of a literal of shape "
                   "f32[2,2], found 1"},
        SyntaxCase{"LiteralTooMany",
                   "HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1,2,3})\n}",
                   "more than 2 elements in dimension 0"},
        SyntaxCase{"OperandShapeMismatch",
                   "HloModule m\nENTRY e {\n  p = f32[2,2] parameter(0)\n"
                   "  ROOT a = f32[2,2] add(f32[2,2] p, f32[2,5] p)\n}",
                   "line 4, column 46: the operand shape f32[2,5] written for %p is not its "
                   "shape f32[2,2]"},
        SyntaxCase{"LiteralOutOfRange", "HloModule m\nENTRY e {\n  ROOT c = s8[] constant(300)\n}",
                   "line 3, column 26: value 300 is out of range for s8"},
        SyntaxCase{"LiteralNotAnInteger",
                   "HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1.5)\n}",
                   "expected an integer for element type s32, found '1.5'"},
        SyntaxCase{"TwoRoots",
                   "HloModule m\nENTRY e {\n  ROOT a = f32[] constant(1)\n  ROOT b = f32[] "
                   "constant(2)\n}",
                   "line 4, column 8: a computation has only one ROOT; %e has two"},
        SyntaxCase{"DuplicateName",
                   "HloModule m\nENTRY e {\n  a = f32[] constant(1)\n  a = f32[] constant(2)\n}",
                   "line 4, column 3: instruction %a is defined twice in %e"},
        SyntaxCase{"DuplicateComputation",
                   "HloModule m\nc { ROOT a = f32[] constant(1) }\nc { ROOT b = f32[] "
                   "constant(1) }",
                   "line 3, column 1: computation %c is defined twice"},
        SyntaxCase{"TwoEntries",
                   "HloModule m\nENTRY c { ROOT a = f32[] constant(1) }\nENTRY d { ROOT b = f32[] "
                   "constant(1) }",
                   "line 3, column 1: a module has only one ENTRY computation"},
        SyntaxCase{"DuplicateAttribute",
                   "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT t = f32[2] "
                   "transpose(p), dimensions={0}, dimensions={0}\n}",
                   "attribute dimensions appears twice on %t"},
        SyntaxCase{"BadWindowField",
                   "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  z = f32[] constant(0)\n  "
                   "ROOT r = f32[1] reduce-window(p, z), window={size=2 skew=1}, to_apply=e\n}",
                   "unknown window field 'skew'"},
        SyntaxCase{"BadDirection",
                   "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = pred[] "
                   "compare(p, p), direction=XX\n}",
                   "expected a comparison direction (EQ, NE, LT, LE, GT, GE), found 'XX'"},
        SyntaxCase{"BadDimLabels",
                   "HloModule m\nENTRY e {\n  a = f32[1,2,2,1] parameter(0)\n  b = f32[1,1,1,1] "
                   "parameter(1)\n  ROOT c = f32[1,2,2,1] convolution(a, b), window={size=1x1}, "
                   "dim_labels=b00f_01io->b01f\n}",
                   "bad spatial label '0' in the input labels"},
        SyntaxCase{"MissingParameterNumber",
                   "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(x)\n}",
                   "line 3, column 28: expected the parameter number, found 'x'"},
        SyntaxCase{"ParameterGap", "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(1)\n}",
                   "%e has no parameter(0) but a higher-numbered one"},
        SyntaxCase{"BadLayout",
                   "HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{1,0,2} parameter(0)\n}",
                   "the layout of f32[2,3] lists 3 dimensions"},
        SyntaxCase{"LayoutNotAPermutation",
                   "HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{1,1} parameter(0)\n}",
                   "the layout of f32[2,3] is not a permutation of its dims"},
        SyntaxCase{"ElementCountOverflow",
                   "HloModule m\nENTRY e {\n  ROOT p = f32[4294967296,4294967296] parameter(0)\n}",
                   "f32[4294967296,4294967296] has more elements than an int64 counts"},
        SyntaxCase{
            "MissingCloseBrace", "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n",
            "line 4, column 1: expected '}' to end the instructions of %e, found end of input"},
        SyntaxCase{"BadIotaGroups",
                   "HloModule m\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = "
                   "f32[] add(a, b) }\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] "
                   "all-reduce(p), replica_groups=[2,3]<=[4], to_apply=add\n}",
                   "the iota tile does not match the reshape dims"}),
    [](const ::testing::TestParamInfo<SyntaxCase>& info) { return info.param.name; });

TEST(HloParserLimits, TextSize) {
  Limits limits;
  limits.max_text_bytes = 64;
  const std::string text =
      "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n" + std::string(100, ' ');
  Result<Module> m = ParseModule(text, limits);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(),
              HasSubstr("HLO text is 153 bytes, above the limit max_text_bytes = 64"));
}

TEST(HloParserLimits, InstructionCount) {
  Limits limits;
  limits.max_instructions = 3;
  std::string text = "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n";
  for (int i = 0; i < 4; ++i) text += "  n" + std::to_string(i) + " = f32[] negate(p)\n";
  text += "}\n";
  Result<Module> m = ParseModule(text, limits);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(),
              HasSubstr("line 6, column 8: the module has more instructions than the limit "
                        "max_instructions = 3"));
  limits.max_instructions = 5;
  EXPECT_TRUE(ParseModule(text, limits).ok());
}

TEST(HloParserLimits, NestingDepth) {
  Limits limits;
  limits.max_nesting_depth = 8;
  std::string shape = "f32[]";
  for (int i = 0; i < 10; ++i) shape = "(" + shape + ")";
  Result<Module> m =
      ParseModule("HloModule m\nENTRY e {\n  ROOT p = " + shape + " parameter(0)\n}", limits);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(),
              HasSubstr("nesting deeper than the limit max_nesting_depth = 8"));
}

TEST(HloParserLimits, HugeConstantShapeIsRefusedBeforeAllocating) {
  Result<Module> m =
      ParseModule("HloModule m\nENTRY e {\n  ROOT c = f32[1000000000000] constant({1})\n}");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("is larger than its text"));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
