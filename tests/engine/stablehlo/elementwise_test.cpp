// Elementwise ops, with the StableHLO specification's examples (openxla/stablehlo
// docs/spec.md): integer and bitwise ops bit for bit, floating point as specified.
#include "tests/engine/stablehlo/stablehlo_test_util.h"

namespace tpuemu::engine::stablehlo {
namespace {

TEST(StablehloElementwise, IntegerArithmeticFromTheSpec) {
  ExpectChecksPass(R"(
func.func @main() {
  %lhs = stablehlo.constant dense<[17, -17, 17, -17]> : tensor<4xi32>
  %rhs = stablehlo.constant dense<[3, 3, -3, -3]> : tensor<4xi32>
  %div = stablehlo.divide %lhs, %rhs : tensor<4xi32>
  %rem = stablehlo.remainder %lhs, %rhs : tensor<4xi32>
  check.expect_eq_const %div, dense<[5, -5, -5, 5]> : tensor<4xi32>
  check.expect_eq_const %rem, dense<[2, -2, 2, -2]> : tensor<4xi32>
  %a = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>
  %add = stablehlo.add %a, %b : tensor<2x2xi32>
  %sub = stablehlo.subtract %a, %b : tensor<2x2xi32>
  %mul = stablehlo.multiply %a, %b : tensor<2x2xi32>
  %max = stablehlo.maximum %a, %b : tensor<2x2xi32>
  %min = stablehlo.minimum %a, %b : tensor<2x2xi32>
  check.expect_eq_const %add, dense<[[6, 8], [10, 12]]> : tensor<2x2xi32>
  check.expect_eq_const %sub, dense<[[-4, -4], [-4, -4]]> : tensor<2x2xi32>
  check.expect_eq_const %mul, dense<[[5, 12], [21, 32]]> : tensor<2x2xi32>
  check.expect_eq_const %max, dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>
  check.expect_eq_const %min, dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %x = stablehlo.constant dense<[-2, 0, 2]> : tensor<3xi32>
  %abs = stablehlo.abs %x : tensor<3xi32>
  %neg = stablehlo.negate %x : tensor<3xi32>
  %sign = stablehlo.sign %x : tensor<3xi32>
  check.expect_eq_const %abs, dense<[2, 0, 2]> : tensor<3xi32>
  check.expect_eq_const %neg, dense<[2, 0, -2]> : tensor<3xi32>
  check.expect_eq_const %sign, dense<[-1, 0, 1]> : tensor<3xi32>
  %wrap = stablehlo.constant dense<2147483647> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %over = stablehlo.add %wrap, %one : tensor<i32>
  check.expect_eq_const %over, dense<-2147483648> : tensor<i32>
  func.return
}
)",
                   11);
}

TEST(StablehloElementwise, BitwiseAndShiftsAreBitExact) {
  ExpectChecksPass(R"(
func.func @main() {
  %a = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>
  %and = stablehlo.and %a, %b : tensor<2x2xi32>
  %or = stablehlo.or %a, %b : tensor<2x2xi32>
  %xor = stablehlo.xor %a, %b : tensor<2x2xi32>
  check.expect_eq_const %and, dense<[[1, 2], [3, 0]]> : tensor<2x2xi32>
  check.expect_eq_const %or, dense<[[5, 6], [7, 12]]> : tensor<2x2xi32>
  check.expect_eq_const %xor, dense<[[4, 4], [4, 12]]> : tensor<2x2xi32>
  %n = stablehlo.constant dense<[[7, -8], [0, -1]]> : tensor<2x2xi32>
  %not = stablehlo.not %n : tensor<2x2xi32>
  check.expect_eq_const %not, dense<[[-8, 7], [-1, 0]]> : tensor<2x2xi32>
  %p = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %notp = stablehlo.not %p : tensor<2xi1>
  check.expect_eq_const %notp, dense<[false, true]> : tensor<2xi1>
  %sl = stablehlo.constant dense<[-1, 0, 1]> : tensor<3xi64>
  %sa = stablehlo.constant dense<[-1, 0, 8]> : tensor<3xi64>
  %amt = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi64>
  %shl = stablehlo.shift_left %sl, %amt : tensor<3xi64>
  %sra = stablehlo.shift_right_arithmetic %sa, %amt : tensor<3xi64>
  %srl = stablehlo.shift_right_logical %sa, %amt : tensor<3xi64>
  check.expect_eq_const %shl, dense<[-2, 0, 8]> : tensor<3xi64>
  check.expect_eq_const %sra, dense<[-1, 0, 1]> : tensor<3xi64>
  check.expect_eq_const %srl, dense<[9223372036854775807, 0, 1]> : tensor<3xi64>
  %c = stablehlo.constant dense<[[0, 1], [128, -1]]> : tensor<2x2xi64>
  %clz = stablehlo.count_leading_zeros %c : tensor<2x2xi64>
  check.expect_eq_const %clz, dense<[[64, 63], [56, 0]]> : tensor<2x2xi64>
  %pc = stablehlo.constant dense<[0, 1, 2, 127]> : tensor<4xi64>
  %pop = stablehlo.popcnt %pc : tensor<4xi64>
  check.expect_eq_const %pop, dense<[0, 1, 1, 7]> : tensor<4xi64>
  %u = stablehlo.constant dense<[255, 1]> : tensor<2xui8>
  %u1 = stablehlo.constant dense<[1, 2]> : tensor<2xui8>
  %uadd = stablehlo.add %u, %u1 : tensor<2xui8>
  check.expect_eq_const %uadd, dense<[0, 3]> : tensor<2xui8>
  func.return
}
)",
                   11);
}

TEST(StablehloElementwise, FloatRoundingAndCompareSelectClamp) {
  ExpectChecksPass(R"(
func.func @main() {
  %x = stablehlo.constant dense<[-2.5, 0.4, 0.5, 0.6, 2.5]> : tensor<5xf32>
  %afz = stablehlo.round_nearest_afz %x : tensor<5xf32>
  %even = stablehlo.round_nearest_even %x : tensor<5xf32>
  check.expect_eq_const %afz, dense<[-3.0, 0.0, 1.0, 1.0, 3.0]> : tensor<5xf32>
  check.expect_eq_const %even, dense<[-2.0, 0.0, 0.0, 1.0, 2.0]> : tensor<5xf32>
  %f = stablehlo.constant dense<[-0.8166, -0.2530, 0.2530, 0.8166, 2.0]> : tensor<5xf32>
  %floor = stablehlo.floor %f : tensor<5xf32>
  %ceil = stablehlo.ceil %f : tensor<5xf32>
  check.expect_eq_const %floor, dense<[-1.0, -1.0, 0.0, 0.0, 2.0]> : tensor<5xf32>
  check.expect_eq_const %ceil, dense<[-0.0, -0.0, 1.0, 1.0, 2.0]> : tensor<5xf32>
  %pred = stablehlo.constant dense<[[false, true], [true, false]]> : tensor<2x2xi1>
  %t = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %e = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>
  %sel = stablehlo.select %pred, %t, %e : tensor<2x2xi1>, tensor<2x2xi32>
  check.expect_eq_const %sel, dense<[[5, 2], [3, 8]]> : tensor<2x2xi32>
  %lo = stablehlo.constant dense<[5, 10, 15]> : tensor<3xi32>
  %v = stablehlo.constant dense<[3, 13, 23]> : tensor<3xi32>
  %hi = stablehlo.constant dense<[10, 15, 20]> : tensor<3xi32>
  %cl = stablehlo.clamp %lo, %v, %hi : tensor<3xi32>
  check.expect_eq_const %cl, dense<[5, 13, 20]> : tensor<3xi32>
  %l = stablehlo.constant dense<[-2.0, 0x7FC00000, 1.0]> : tensor<3xf32>
  %r = stablehlo.constant dense<[-2.0, 0x7FC00000, 2.0]> : tensor<3xf32>
  %eq = stablehlo.compare  EQ, %l, %r,  FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %lt = stablehlo.compare  LT, %l, %r : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %tot = stablehlo.compare  EQ, %l, %r,  TOTALORDER : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  check.expect_eq_const %eq, dense<[true, false, false]> : tensor<3xi1>
  check.expect_eq_const %lt, dense<[false, false, true]> : tensor<3xi1>
  check.expect_eq_const %tot, dense<[true, true, false]> : tensor<3xi1>
  %ui = stablehlo.constant dense<[1, 4294967295]> : tensor<2xui32>
  %uj = stablehlo.constant dense<[2, 1]> : tensor<2xui32>
  %ult = stablehlo.compare  LT, %ui, %uj,  UNSIGNED : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xi1>
  check.expect_eq_const %ult, dense<[true, false]> : tensor<2xi1>
  func.return
}
)",
                   10);
}

TEST(StablehloElementwise, TranscendentalsWithinAFewUlps) {
  ExpectChecksPass(R"(
func.func @main() {
  %x = stablehlo.constant dense<[0.0, 1.0, -1.5, 3.0]> : tensor<4xf32>
  %exp = stablehlo.exponential %x : tensor<4xf32>
  %tanh = stablehlo.tanh %x : tensor<4xf32>
  %sin = stablehlo.sine %x : tensor<4xf32>
  %cos = stablehlo.cosine %x : tensor<4xf32>
  %log = stablehlo.log_plus_one %x : tensor<4xf32>
  %lg = stablehlo.logistic %x : tensor<4xf32>
  %e_exp = stablehlo.constant dense<[1.0, 2.71828183, 0.223130160, 20.0855369]> : tensor<4xf32>
  check.expect_close %exp, %e_exp, max_ulp_difference = 3 : tensor<4xf32>, tensor<4xf32>
  %e_tanh = stablehlo.constant dense<[0.0, 0.761594156, -0.905148254, 0.995054754]> : tensor<4xf32>
  check.expect_close %tanh, %e_tanh, max_ulp_difference = 3 : tensor<4xf32>, tensor<4xf32>
  %e_sin = stablehlo.constant dense<[0.0, 0.841470985, -0.997494987, 0.141120008]> : tensor<4xf32>
  check.expect_close %sin, %e_sin, max_ulp_difference = 3 : tensor<4xf32>, tensor<4xf32>
  %e_cos = stablehlo.constant dense<[1.0, 0.540302306, 0.0707372017, -0.989992497]> : tensor<4xf32>
  check.expect_close %cos, %e_cos, max_ulp_difference = 3 : tensor<4xf32>, tensor<4xf32>
  %e_lg = stablehlo.constant dense<[0.5, 0.731058579, 0.182425524, 0.952574127]> : tensor<4xf32>
  check.expect_close %lg, %e_lg, max_ulp_difference = 3 : tensor<4xf32>, tensor<4xf32>
  %p = stablehlo.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %sq = stablehlo.sqrt %p : tensor<2xf32>
  %rs = stablehlo.rsqrt %p : tensor<2xf32>
  check.expect_eq_const %sq, dense<[2.0, 3.0]> : tensor<2xf32>
  check.expect_eq_const %rs, dense<[0.5, 0.333333343]> : tensor<2xf32>
  %bits = stablehlo.constant dense<1.0> : tensor<f32>
  %bc = stablehlo.bitcast_convert %bits : (tensor<f32>) -> tensor<i32>
  check.expect_eq_const %bc, dense<1065353216> : tensor<i32>
  %fi = stablehlo.constant dense<[-1.7, 2.9, 0x7FC00000, 3.0e+10]> : tensor<4xf32>
  %cv = stablehlo.convert %fi : (tensor<4xf32>) -> tensor<4xi32>
  check.expect_eq_const %cv, dense<[-1, 2, 0, 2147483647]> : tensor<4xi32>
  func.return
}
)",
                   9);
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
