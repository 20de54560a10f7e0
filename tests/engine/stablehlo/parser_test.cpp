// Syntax of StableHLO text: the generic and pretty forms give the same module, parse errors
// name line and column, unsupported types and ops are refused by name.
#include <gtest/gtest.h>

#include "engine/stablehlo/import.h"
#include "engine/stablehlo/parser.h"

namespace tpuemu::engine::stablehlo {
namespace {

std::string Error(std::string_view text) {
  Result<hlo::Module> m = ParseStableHlo(text);
  return m.ok() ? "ok" : m.status().message();
}

TEST(StablehloParser, DetectsTheDialect) {
  EXPECT_TRUE(IsStableHloText("module @jit_f attributes {mhlo.num_partitions = 1 : i32} {"));
  EXPECT_TRUE(IsStableHloText("// comment\n#loc = loc(unknown)\nmodule {"));
  EXPECT_TRUE(IsStableHloText("  func.func @main() {"));
  EXPECT_FALSE(IsStableHloText("HloModule m\nENTRY e {"));
  EXPECT_FALSE(IsStableHloText("modules"));
}

TEST(StablehloParser, PrettyAndGenericFormsLowerAlike) {
  const char* pretty = R"(
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.compare  GT, %1, %a,  FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = stablehlo.select %2, %1, %b : tensor<4xi1>, tensor<4xf32>
  return %3 : tensor<4xf32>
}
)";
  const char* generic_ops = R"(
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "stablehlo.compare"(%1, %a) {comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = "stablehlo.select"(%2, %1, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%3) : (tensor<4xf32>) -> ()
}
)";
  Result<hlo::Module> a = ParseStableHlo(pretty);
  Result<hlo::Module> b = ParseStableHlo(generic_ops);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(a->computations.size(), b->computations.size());
  const hlo::Computation& ea = a->entry_computation();
  const hlo::Computation& eb = b->entry_computation();
  ASSERT_EQ(ea.instructions.size(), eb.instructions.size());
  for (size_t k = 0; k < ea.instructions.size(); ++k) {
    const hlo::Instruction& x = ea.instructions[k];
    const hlo::Instruction& y = eb.instructions[k];
    EXPECT_EQ(x.opcode, y.opcode) << k;
    EXPECT_EQ(x.shape.ToString(), y.shape.ToString()) << k;
    EXPECT_EQ(x.operands, y.operands) << k;
    EXPECT_EQ(x.dimensions, y.dimensions) << k;
    EXPECT_EQ(x.a().compare_type, y.a().compare_type) << k;
  }
}

TEST(StablehloParser, ErrorsNameLineAndColumn) {
  const std::string e = Error(
      "func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> tensor<f32>\n}\n");
  EXPECT_NE(e.find("StableHLO text line 2, column"), std::string::npos) << e;
  const std::string u =
      Error("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return %b : tensor<f32>\n}\n");
  EXPECT_NE(u.find("line 2"), std::string::npos) << u;
  EXPECT_NE(u.find("undefined value %b"), std::string::npos) << u;
}

TEST(StablehloParser, RefusesDynamicShapesQuantizedTypesAndUnknownOps) {
  const std::string dyn = Error(
      "func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {\n  return %a : "
      "tensor<?x4xf32>\n}\n");
  EXPECT_NE(dyn.find("dynamic shape tensor<?x4xf32>"), std::string::npos) << dyn;
  EXPECT_NE(dyn.find("line 1"), std::string::npos) << dyn;
  const std::string quant = Error(
      "func.func @main(%a: tensor<4x!quant.uniform<i8:f32, 1.0:3>>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.uniform_dequantize %a : (tensor<4x!quant.uniform<i8:f32, 1.0:3>>) -> "
      "tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n");
  EXPECT_NE(quant.find("quantized"), std::string::npos) << quant;
  const std::string op = Error(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.fft %a, type = FFT, length = [4] : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n");
  EXPECT_NE(op.find("stablehlo.fft is not supported"), std::string::npos) << op;
  EXPECT_NE(op.find("line 2"), std::string::npos) << op;
}

TEST(StablehloParser, LocationsAndAliasesAreSkipped) {
  const char* text = R"(#loc1 = loc("x.py":3:4)
module @m {
  func.func public @main(%arg0: tensor<2xi32> loc("x")) -> (tensor<2xi32> {jax.result_info = ""}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xi32> loc(#loc1)
    return %0 : tensor<2xi32> loc(#loc1)
  } loc(#loc1)
} loc(#loc1)
#loc2 = loc(unknown)
)";
  EXPECT_EQ(Error(text), "ok");
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
