// The shorthand XLA's parser accepts but never prints (its "non-roundtrip" cases): anonymous
// instructions nested as operands, parameters declared inline, result shapes left to inference,
// broadcasts of scalars without `dimensions`, sparse layouts and the empty layout `{}` of old
// dumps, XLA's literal range rules, comments anywhere and DOS/old-Mac line endings, and the
// structured-sparse dot that parses but does not run. Restated with our own modules.
#include <gtest/gtest.h>

#include "engine/hlo/evaluator.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::F32;
using testing::Floats;
using testing::MustParse;
using testing::MustRun;

std::string RootShape(const Module& m) {
  const Computation& c = m.entry_computation();
  return c.instructions[static_cast<size_t>(c.root)].shape.ToString();
}

TEST(HloShorthand, InlineParametersNestedInOperands) {
  const std::string text = R"(HloModule inline_params

ENTRY main {
    ROOT out = add(f32[3] parameter(0), multiply(f32[3] parameter(1), f32[3] parameter(2)))
})";
  const Module m = MustParse(text);
  EXPECT_EQ(m.entry_computation().parameters.size(), 3u);
  EXPECT_EQ(Floats(MustRun(text, {F32({3}, {1, 2, 3}), F32({3}, {2, 2, 2}), F32({3}, {5, 6, 7})})),
            (std::vector<float>{11, 14, 17}));
}

TEST(HloShorthand, NamesAndNestedOpcodesOfTheSameSpelling) {
  // A bare `add` names the instruction; `add(...)` with parentheses is a nested anonymous add.
  const std::string text = R"(HloModule same_spelling
ENTRY main {
  add = add(f32[2] parameter(0), f32[2] parameter(1))
  ROOT twice = add(add, add(add, add))
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({2}, {1, 2}), F32({2}, {3, 4})})),
            (std::vector<float>{12, 18}));
  const std::string tuple = R"(HloModule mixed
ENTRY main {
  add = add(f32[2] parameter(0), f32[2] parameter(1))
  ROOT t = tuple(add, add(add, add), add)
})";
  EXPECT_EQ(RootShape(MustParse(tuple)), "(f32[2], f32[2], f32[2])");
}

TEST(HloShorthand, TupleShapesInsideAnonymousInstructionsAcrossLines) {
  const std::string text = R"(HloModule gte_multiline

ENTRY main {
  ROOT first = get-tuple-element(
    (f32[2], f16[2]) tuple(f32[2] parameter(0), f16[2] parameter(1))
  ), index=0
})";
  const Module m = MustParse(text);
  EXPECT_EQ(RootShape(m), "f32[2]");
}

TEST(HloShorthand, BroadcastOfAScalarNeedsNoDimensions) {
  const std::string text = R"(HloModule bcast

ENTRY main {
  ROOT r = sqrt(f32[2,3] broadcast(f32[] parameter(0)))
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({}, {16})})), std::vector<float>(6, 4.0f));
}

TEST(HloShorthand, SparseAndEmptyLayouts) {
  for (const char* text : {
           R"(HloModule sparse
ENTRY main {
  ROOT p = f32[4,4]{1,0:D(D,C)#(u64)*(u32)S(42)P((s32[4]{0:T(128)}, s32[4]{0:T(128)}, f32[4]{0:T(128)}))} parameter(0)
})",
           R"(HloModule coo
ENTRY main {
  ROOT p = f32[4,4]{1,0:D(C+~,S~)} parameter(0)
})",
           R"(HloModule old_layouts:

ENTRY %main (x: f32[], y: f32[]) -> f32[] {
  %x = f32[]{} parameter(0)
  %y = f32[]{} parameter(1)
  ROOT %s = f32[]{} add(f32[]{} %x, f32[]{} %y)
})",
       }) {
    SCOPED_TRACE(text);
    Result<Module> m = ParseModule(text);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
  }
}

Result<Value> Constant(const std::string& literal) {
  return testing::Run("HloModule lit\nENTRY e {\n  ROOT c = " + literal + "\n}\n", {});
}

TEST(HloShorthand, LiteralRangesAreXlas) {
  // A float is out of range only when it would round to infinity: XLA prints the largest bf16
  // as 3.39e+38, which is above it but rounds down to it.
  Result<Value> bf = Constant("bf16[2] constant({-3.39e+38, 3.39e+38})");
  ASSERT_TRUE(bf.ok()) << bf.status().ToString();
  EXPECT_FLOAT_EQ(Floats(*bf)[1], 3.3895313892515355e38f);
  EXPECT_TRUE(Constant("f16[] constant(65519)").ok());
  EXPECT_TRUE(Constant("bf16[] constant(-65505)").ok());
  EXPECT_NE(Constant("f16[] constant(-65520)").status().message().find("out of range for f16"),
            std::string::npos);
  EXPECT_FALSE(Constant("bf16[] constant(1e100)").ok());
  // u64 takes any 64-bit pattern, -1 included; u32 does not wrap.
  Result<Value> u = Constant("u64[] constant(-1)");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(static_cast<uint64_t>(testing::Integers(*u)[0]), ~uint64_t{0});
  EXPECT_TRUE(Constant("u64[] constant(9223372036854775808)").ok());
  EXPECT_FALSE(Constant("u32[] constant(4294967296)").ok());
  // NaN with a sign and a payload.
  EXPECT_TRUE(Constant("bf16[2]{0} constant({-nan(0x7f), -nan})").ok());
}

TEST(HloShorthand, CommentsAnywhereAndEveryLineEnding) {
  const std::string commented = R"(/* about the module */
HloModule commented, input_output_alias={ {0}: (0, {0}, must-alias) }, buffer_donor={ (0, {1}) }
// a line comment
ENTRY /*between*/ main {
  /* before */
  p = (f32[], f32[]) parameter(0)
  a = f32[] get-tuple-element(p), index=0 // after
  c = /*before the shape*/f32[1]{0} constant({7 /*inside*/}), metadata={source_line=5, op_type="::const"}
  ROOT s = f32[] add(a, a)
/*
 ROOT ignored = f32[] constant(0)
*/
})";
  EXPECT_TRUE(ParseModule(commented).ok()) << ParseModule(commented).status().ToString();
  for (const char* eol : {"\r\n", "\r"}) {
    const std::string e = eol;
    const std::string text = "HloModule eol" + e + "// c" + e + "ENTRY main {" + e +
                             "ROOT c = f32[1]{0} constant({5}) // c" + e + "}";
    EXPECT_EQ(Floats(MustRun(text, {})), std::vector<float>{5});
  }
}

TEST(HloShorthand, SparseDotParsesButDoesNotRun) {
  const std::string text = R"(HloModule sparse_dot
ENTRY main {
  a = f16[4,8]{1,0} parameter(0)
  b = f16[16,4]{1,0} parameter(1)
  meta = u16[4,1]{1,0} parameter(2)
  ROOT d = dot(a, b, meta), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sparsity=L.1@2:4
})";
  Result<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(RootShape(*m), "f16[4,4]");  // inferred with the logical contracting size
  const Status s = CheckEvaluable(*m);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("%d (line 6): sparse dot (sparsity=L.1@2:4)"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace tpuemu::engine::hlo
