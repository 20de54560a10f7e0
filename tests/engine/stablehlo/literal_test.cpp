// dense<...> literals in every form StableHLO prints: nested lists, splats, booleans, hex
// blobs (little-endian element bytes; one byte per i1), hex special floats, complex pairs.
#include "tests/engine/stablehlo/stablehlo_test_util.h"

#include "engine/stablehlo/import.h"

namespace tpuemu::engine::stablehlo {
namespace {

TEST(StablehloLiteral, EveryDenseForm) {
  ExpectChecksPass(R"(
func.func @main() {
  %blob = stablehlo.constant dense<"0x0000803F000000C0"> : tensor<2xf32>
  check.expect_eq_const %blob, dense<[1.0, -2.0]> : tensor<2xf32>
  %ints = stablehlo.constant dense<"0x01000000FFFFFFFF"> : tensor<2xi32>
  check.expect_eq_const %ints, dense<[1, -1]> : tensor<2xi32>
  %bools = stablehlo.constant dense<"0x0100"> : tensor<2xi1>
  check.expect_eq_const %bools, dense<[true, false]> : tensor<2xi1>
  %splatblob = stablehlo.constant dense<"0x0000C03F"> : tensor<3xf32>
  check.expect_eq_const %splatblob, dense<1.5> : tensor<3xf32>
  %special = stablehlo.constant dense<[0x7F800000, 0xFF800000, 0x80000000]> : tensor<3xf32>
  %inf = stablehlo.is_finite %special : (tensor<3xf32>) -> tensor<3xi1>
  check.expect_eq_const %inf, dense<[false, false, true]> : tensor<3xi1>
  %bf = stablehlo.constant dense<[0x3F80, 0xC000]> : tensor<2xbf16>
  check.expect_eq_const %bf, dense<[1.0, -2.0]> : tensor<2xbf16>
  %h = stablehlo.constant dense<[1.5, 65504.0]> : tensor<2xf16>
  %hb = stablehlo.bitcast_convert %h : (tensor<2xf16>) -> tensor<2xi16>
  check.expect_eq_const %hb, dense<[15872, 31743]> : tensor<2xi16>
  %u64 = stablehlo.constant dense<18446744073709551615> : tensor<ui64>
  %s64 = stablehlo.bitcast_convert %u64 : (tensor<ui64>) -> tensor<i64>
  check.expect_eq_const %s64, dense<-1> : tensor<i64>
  %e = stablehlo.constant dense<> : tensor<0xf32>
  func.return
}
)",
                   8);
}

TEST(StablehloLiteral, ComplexAndF64ParseForPricing) {
  Result<hlo::Module> m = ParseStableHlo(R"(
func.func @main() -> (tensor<2xcomplex<f32>>, tensor<f64>) {
  %c = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %d = stablehlo.constant dense<2.5> : tensor<f64>
  return %c, %d : tensor<2xcomplex<f32>>, tensor<f64>
}
)");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->entry_computation().instructions.size(), 3u);
}

TEST(StablehloLiteral, WrongElementCountNamesTheLine) {
  Result<hlo::Module> m = ParseStableHlo(R"(func.func @main() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
)");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("line 2"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("2 elements"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
