// ModuleBuilder checks and shapes each instruction as it is added (the verifier's rules) and
// PrintModule writes text that ParseModule reads back into the same module.
#include "engine/hlo/builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "engine/hlo/parser.h"
#include "engine/hlo/printer.h"

namespace tpuemu::engine::hlo {
namespace {

using ::testing::HasSubstr;

Instruction Make(std::string name, Opcode opcode, std::vector<int> operands = {}) {
  Instruction inst;
  inst.name = std::move(name);
  inst.opcode = opcode;
  inst.operands = std::move(operands);
  return inst;
}

Instruction Parameter(std::string name, int number, std::vector<int64_t> dims) {
  Instruction p = Make(std::move(name), Opcode::kParameter);
  p.index = number;
  p.shape = Shape::Array(PrimitiveType::kF32, std::move(dims));
  return p;
}

Instruction Dot(std::string name, int lhs, int rhs) {
  Instruction d = Make(std::move(name), Opcode::kDot, {lhs, rhs});
  d.mutable_attrs().dot.lhs_contracting = {1};
  d.mutable_attrs().dot.rhs_contracting = {0};
  return d;
}

TEST(ModuleBuilderTest, InfersWhatTheOperandsDetermine) {
  ModuleBuilder b("m");
  const int x = *b.Add(Parameter("x", 0, {8, 16}));
  const int w = *b.Add(Parameter("w", 1, {16, 4}));
  Result<int> y = b.Add(Dot("y", x, w));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(b.at(*y).shape.ToString(), "f32[8,4]");
}

TEST(ModuleBuilderTest, RejectsAnInstructionTheVerifierWouldAndStaysUnchanged) {
  ModuleBuilder b("m");
  const int x = *b.Add(Parameter("x", 0, {8, 16}));
  const int w = *b.Add(Parameter("w", 1, {32, 4}));
  Result<int> y = b.Add(Dot("y", x, w));
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(), HasSubstr("%y (dot): contracting dimension sizes differ"));
  EXPECT_EQ(b.size(), 2);

  // A declared shape the operands do not give.
  Instruction neg = Make("n", Opcode::kNegate, {x});
  neg.shape = Shape::Array(PrimitiveType::kF32, {16, 8});
  Result<int> n = b.Add(std::move(neg));
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.status().message(), HasSubstr("the result shape is f32[16,8]"));

  // An operand that was never added.
  Result<int> dangling = b.Add(Make("d", Opcode::kNegate, {7}));
  ASSERT_FALSE(dangling.ok());
  EXPECT_THAT(dangling.status().message(), HasSubstr("operand 7 is not an instruction"));
  EXPECT_EQ(b.size(), 2);
}

TEST(ModuleBuilderTest, RejectsATakenParameterNumberAndAGapInThem) {
  ModuleBuilder b("m");
  ASSERT_TRUE(b.Add(Parameter("x", 0, {2})).ok());
  EXPECT_FALSE(b.Add(Parameter("again", 0, {2})).ok());
  const int y = *b.Add(Parameter("y", 2, {2}));
  Result<Module> m = b.Finish({y});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("no parameter 1"));
}

// A module with every kind of attribute the printer writes, printed, parsed and printed again.
TEST(PrintModuleTest, TextReadsBackIntoTheSameModule) {
  ModuleBuilder b("round_trip");
  const int x = *b.Add(Parameter("x", 0, {2, 4, 4, 3}));
  const int f = *b.Add(Parameter("f", 1, {3, 3, 3, 5}));
  Instruction conv = Make("conv", Opcode::kConvolution, {x, f});
  {
    Attributes& a = conv.mutable_attrs();
    a.has_window = true;
    a.window.resize(2);
    for (WindowDim& w : a.window) {
      w.size = 3;
      w.stride = 2;
      w.pad_low = 1;
      w.pad_high = 1;
    }
    a.conv = {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};  // b01f_01io->b01f
  }
  const int c = *b.Add(std::move(conv));
  Instruction zero = Make("zero", Opcode::kConstant);
  zero.shape = Shape::Array(PrimitiveType::kF32, {});
  Array z = Array::Zeros(PrimitiveType::kF32, {});
  z.SetDouble(0, -0.125);
  zero.literal = std::make_shared<const Value>(Value::Of(std::move(z)));
  const int zi = *b.Add(std::move(zero));
  Instruction sum = Make("sum", Opcode::kReduce, {c, zi});
  sum.dimensions = {1, 2};
  sum.has_dimensions = true;
  sum.called = {b.Reducer(/*max=*/false, PrimitiveType::kF32)};
  const int s = *b.Add(std::move(sum));
  Instruction iota = Make("iota", Opcode::kIota);
  iota.index = 1;
  iota.shape = Shape::Array(PrimitiveType::kS32, {2, 5});
  const int io = *b.Add(std::move(iota));
  Instruction conv_ints = Make("as_f32", Opcode::kConvert, {io});
  conv_ints.shape = Shape::Array(PrimitiveType::kF32, {2, 5});
  const int ioc = *b.Add(std::move(conv_ints));
  Instruction lt = Make("lt", Opcode::kCompare, {s, ioc});
  lt.mutable_attrs().direction = Direction::kLt;
  lt.mutable_attrs().has_direction = true;
  const int l = *b.Add(std::move(lt));
  const int sel = *b.Add(Make("sel", Opcode::kSelect, {l, s, ioc}));
  Instruction slice = Make("slice", Opcode::kSlice, {sel});
  slice.mutable_attrs().slice_start = {0, 1};
  slice.mutable_attrs().slice_limit = {2, 5};
  slice.mutable_attrs().slice_stride = {1, 2};
  const int sl = *b.Add(std::move(slice));
  Instruction t = Make("t", Opcode::kTranspose, {sl});
  t.dimensions = {1, 0};
  t.has_dimensions = true;
  t.op_name = "g/\"t\"";
  const int tr = *b.Add(std::move(t));
  Result<Module> built = b.Finish({tr, s});
  ASSERT_TRUE(built.ok()) << built.status().ToString();

  Result<std::string> text = PrintModule(*built);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_THAT(*text, HasSubstr("HloModule round_trip, entry_computation_layout={(f32[2,4,4,3]"
                               "{3,2,1,0}, f32[3,3,3,5]{3,2,1,0})->(f32[2,2]{1,0}, "
                               "f32[2,5]{1,0})}"));
  EXPECT_THAT(*text, HasSubstr("window={size=3x3 stride=2x2 pad=1_1x1_1}, "
                               "dim_labels=b01f_01io->b01f"));
  EXPECT_THAT(*text, HasSubstr("zero = f32[] constant(-0.125)"));
  EXPECT_THAT(*text, HasSubstr("dimensions={1,2}, to_apply=add.f32"));
  EXPECT_THAT(*text, HasSubstr("slice={[0:2], [1:5:2]}"));
  EXPECT_THAT(*text, HasSubstr("metadata={op_name=\"g/\\\"t\\\"\"}"));
  Result<Module> parsed = ParseModule(*text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << *text;
  Result<std::string> again = PrintModule(*parsed);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *text);
  EXPECT_EQ(parsed->instruction_count, built->instruction_count);
  const Computation& want = built->entry_computation();
  const Computation& got = parsed->entry_computation();
  ASSERT_EQ(got.instructions.size(), want.instructions.size());
  for (size_t i = 0; i < want.instructions.size(); ++i) {
    const Instruction& w = want.instructions[i];
    const Instruction& g = got.instructions[i];
    EXPECT_EQ(g.name, w.name);
    EXPECT_EQ(g.opcode, w.opcode) << w.name;
    EXPECT_EQ(g.shape.ToString(), w.shape.ToString()) << w.name;
    EXPECT_EQ(g.operands, w.operands) << w.name;
    EXPECT_EQ(g.dimensions, w.dimensions) << w.name;
    EXPECT_EQ(g.a().slice_stride, w.a().slice_stride) << w.name;
    EXPECT_EQ(g.a().window.size(), w.a().window.size()) << w.name;
    EXPECT_EQ(g.op_name, w.op_name) << w.name;
  }
}

TEST(PrintModuleTest, RefusesWhatItCannotWriteBack) {
  Result<Module> m = ParseModule(R"(HloModule m
ENTRY e {
  a = f32[4,3]{1,0} parameter(0)
  i = s32[2,1]{1,0} parameter(1)
  ROOT g = f32[2,3]{1,0} gather(a, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Result<std::string> text = PrintModule(*m);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(), HasSubstr("%g (gather, line 5): not printed"));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
