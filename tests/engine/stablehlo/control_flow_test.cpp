// while, case, if, func.call and composite, including values regions use from outside them.
#include "tests/engine/stablehlo/stablehlo_test_util.h"

namespace tpuemu::engine::stablehlo {
namespace {

TEST(StablehloControlFlow, WhileSumsWithACapturedStep) {
  ExpectChecksPass(R"(
func.func @main() {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %ten = stablehlo.constant dense<10> : tensor<i64>
  %0:2 = stablehlo.while(%iterArg = %zero, %iterArg_0 = %zero) : tensor<i64>, tensor<i64>
   cond {
    %lt = stablehlo.compare  LT, %iterArg, %ten,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %next = stablehlo.add %iterArg, %one : tensor<i64>
    %acc = stablehlo.add %iterArg_0, %next : tensor<i64>
    stablehlo.return %next, %acc : tensor<i64>, tensor<i64>
  }
  check.expect_eq_const %0#0, dense<10> : tensor<i64>
  check.expect_eq_const %0#1, dense<55> : tensor<i64>
  func.return
}
)",
                   2);
}

TEST(StablehloControlFlow, CaseIfAndCalls) {
  ExpectChecksPass(R"(
module @m {
  func.func public @main() {
    %idx = stablehlo.constant dense<1> : tensor<i32>
    %big = stablehlo.constant dense<7> : tensor<i32>
    %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %r:2 = "stablehlo.case"(%idx) ({
      %a = stablehlo.constant dense<[0.0, 0.0]> : tensor<2xf32>
      stablehlo.return %a, %idx : tensor<2xf32>, tensor<i32>
    }, {
      %b = stablehlo.multiply %x, %x : tensor<2xf32>
      stablehlo.return %b, %big : tensor<2xf32>, tensor<i32>
    }) : (tensor<i32>) -> (tensor<2xf32>, tensor<i32>)
    check.expect_eq_const %r#0, dense<[1.0, 4.0]> : tensor<2xf32>
    check.expect_eq_const %r#1, dense<7> : tensor<i32>
    %out = "stablehlo.case"(%big) ({
      %a = stablehlo.constant dense<1> : tensor<i32>
      stablehlo.return %a : tensor<i32>
    }, {
      %b = stablehlo.constant dense<2> : tensor<i32>
      stablehlo.return %b : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    check.expect_eq_const %out, dense<2> : tensor<i32>
    %p = stablehlo.constant dense<false> : tensor<i1>
    %f = "stablehlo.if"(%p) ({
      stablehlo.return %x : tensor<2xf32>
    }, {
      %n = stablehlo.negate %x : tensor<2xf32>
      stablehlo.return %n : tensor<2xf32>
    }) : (tensor<i1>) -> tensor<2xf32>
    check.expect_eq_const %f, dense<[-1.0, -2.0]> : tensor<2xf32>
    %c:2 = call @pair(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    %d = func.call @twice(%c#1) : (tensor<2xf32>) -> tensor<2xf32>
    check.expect_eq_const %d, dense<[6.0, 12.0]> : tensor<2xf32>
    %e = stablehlo.composite "my.double" %x {composite_attributes = {k = 2 : i64}, decomposition = @twice} : (tensor<2xf32>) -> tensor<2xf32>
    check.expect_eq_const %e, dense<[2.0, 4.0]> : tensor<2xf32>
    return
  }
  func.func private @pair(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
    %0 = call @twice(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<2xf32>
    return %0, %1 : tensor<2xf32>, tensor<2xf32>
  }
  func.func private @twice(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
)",
                   6);
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
