// The op families lowered without a test of their own: reduce_precision, rng_bit_generator,
// batch_norm_*, map, select_and_scatter (the StableHLO specification's examples), the
// collectives on several devices, f8 element types, and a module in the shape torch_xla's
// get_stablehlo_text prints.
#include <gtest/gtest.h>

#include "engine/hlo/evaluator.h"
#include "engine/stablehlo/import.h"
#include "tests/engine/stablehlo/stablehlo_test_util.h"

namespace tpuemu::engine::stablehlo {
namespace {

TEST(StablehloOpFamilies, ReducePrecisionRoundsAndOverflows) {
  // e5m2: 2 mantissa bits (1.2 -> 1.25), 5 exponent bits (62000 -> 65536 overflows to inf).
  ExpectChecksPass(R"(
func.func @main() {
  %x = stablehlo.constant dense<[1.1, 1.2, 3.0, 62000.0, -0.3]> : tensor<5xf32>
  %r = "stablehlo.reduce_precision"(%x) <{exponent_bits = 5 : i32, mantissa_bits = 2 : i32}> : (tensor<5xf32>) -> tensor<5xf32>
  check.expect_eq_const %r, dense<[1.0, 1.25, 3.0, 0x7F800000, -0.3125]> : tensor<5xf32>
  %b = stablehlo.reduce_precision %x, format = e8m7 : tensor<5xf32>
  check.expect_eq_const %b, dense<[1.1015625, 1.203125, 3.0, 61952.0, -0.30078125]> : tensor<5xf32>
  func.return
}
)",
                   2);
}

TEST(StablehloOpFamilies, RngBitGeneratorThreeFryAndPhilox) {
  // Random123's known answers for a zero key and counter (tests/engine/hlo/eval_rng_test.cpp).
  ExpectChecksPass(R"(
func.func @main() {
  %s = stablehlo.constant dense<[0, 0]> : tensor<2xui64>
  %state, %bits = "stablehlo.rng_bit_generator"(%s) <{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<1xui64>)
  check.expect_eq_const %bits, dense<[11077253088097075545]> : tensor<1xui64>
  check.expect_eq_const %state, dense<[0, 1]> : tensor<2xui64>
  %p = stablehlo.constant dense<[0, 0, 0]> : tensor<3xui64>
  %pstate, %pbits = stablehlo.rng_bit_generator %p, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)
  check.expect_eq_const %pbits, dense<[1713891541, 3781805453, 3159862348, 2600524760]> : tensor<4xui32>
  func.return
}
)",
                   3);
}

TEST(StablehloOpFamilies, BatchNormSpecExamples) {
  ExpectChecksPass(R"(
func.func @main() {
  %x = stablehlo.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]]> : tensor<2x2x2xf32>
  %one = stablehlo.constant dense<1.0> : tensor<2xf32>
  %mean = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %out, %bm, %bv = "stablehlo.batch_norm_training"(%x, %one, %one) <{epsilon = 0.0 : f32, feature_index = 2 : i64}> : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  check.expect_eq_const %out, dense<[[[0.0, 0.0], [2.0, 2.0]], [[2.0, 2.0], [0.0, 0.0]]]> : tensor<2x2x2xf32>
  check.expect_eq_const %bm, dense<[2.0, 3.0]> : tensor<2xf32>
  check.expect_eq_const %bv, dense<[1.0, 1.0]> : tensor<2xf32>
  %inf = "stablehlo.batch_norm_inference"(%x, %one, %one, %mean, %one) <{epsilon = 0.0 : f32, feature_index = 2 : i64}> : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  check.expect_eq_const %inf, dense<[[[0.0, 0.0], [2.0, 2.0]], [[2.0, 2.0], [0.0, 0.0]]]> : tensor<2x2x2xf32>
  %dy = stablehlo.constant dense<0.1> : tensor<2x2x2xf32>
  %gx, %gs, %go = "stablehlo.batch_norm_grad"(%x, %one, %mean, %one, %dy) <{epsilon = 0.0 : f32, feature_index = 2 : i64}> : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  check.expect_almost_eq_const %gx, dense<0.0> : tensor<2x2x2xf32>
  check.expect_almost_eq_const %gs, dense<0.0> : tensor<2xf32>
  check.expect_almost_eq_const %go, dense<[0.4, 0.4]> : tensor<2xf32>
  func.return
}
)",
                   7);
}

TEST(StablehloOpFamilies, MapAndSelectAndScatter) {
  ExpectChecksPass(R"(
func.func @main() {
  %a = stablehlo.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>
  %b = stablehlo.constant dense<[[4, 5], [6, 7]]> : tensor<2x2xi64>
  %m = "stablehlo.map"(%a, %b) <{dimensions = array<i64: 0, 1>}> ({
  ^bb0(%x: tensor<i64>, %y: tensor<i64>):
    %p = stablehlo.multiply %x, %y : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }) : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  check.expect_eq_const %m, dense<[[0, 5], [12, 21]]> : tensor<2x2xi64>
  %op = stablehlo.constant dense<[[1, 5], [2, 5], [3, 6], [4, 4]]> : tensor<4x2xi64>
  %src = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>
  %z = stablehlo.constant dense<0> : tensor<i64>
  %r = "stablehlo.select_and_scatter"(%op, %src, %z) <{window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>, padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}> ({
  ^bb0(%x: tensor<i64>, %y: tensor<i64>):
    %ge = stablehlo.compare GE, %x, %y : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%x: tensor<i64>, %y: tensor<i64>):
    %s = stablehlo.add %x, %y : tensor<i64>
    stablehlo.return %s : tensor<i64>
  }) : (tensor<4x2xi64>, tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  check.expect_eq_const %r, dense<[[0, 0], [0, 0], [5, 14], [7, 0]]> : tensor<4x2xi64>
  func.return
}
)",
                   2);
}

// The global program on every device: all_reduce sums the replicas' values, all_gather and
// collective_permute move them (replica_id gives each device its own).
TEST(StablehloOpFamilies, CollectivesAcrossReplicas) {
  Result<hlo::Module> m = ParseStableHlo(R"(
module @c attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func public @main() -> (tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<1xf32>) {
    %id = stablehlo.replica_id : tensor<ui32>
    %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
    %x = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %one = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %v = stablehlo.add %x, %one : tensor<2xf32>
    %sum = "stablehlo.all_reduce"(%v) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2xf32>) -> tensor<2xf32>
    %g = "stablehlo.all_gather"(%v) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<2xf32>) -> tensor<4xf32>
    %p = "stablehlo.collective_permute"(%v) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<2xf32>) -> tensor<2xf32>
    %rs = "stablehlo.reduce_scatter"(%v) <{scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2xf32>) -> tensor<1xf32>
    return %sum, %g, %p, %rs : tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<1xf32>
  }
}
)");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->devices(), 2);
  Result<hlo::EvalResult> r = hlo::Evaluate(*m, {{}, {}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto floats = [&](int device, int k) {
    const hlo::Array& a =
        *r->outputs[static_cast<size_t>(device)].elements[static_cast<size_t>(k)].array;
    return std::vector<float>(a.f.begin(), a.f.end());
  };
  // Replica 0 holds [1, 2], replica 1 holds [2, 3].
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(floats(d, 0), (std::vector<float>{3, 5}));
    EXPECT_EQ(floats(d, 1), (std::vector<float>{1, 2, 2, 3}));
  }
  EXPECT_EQ(floats(0, 2), (std::vector<float>{2, 3}));
  EXPECT_EQ(floats(1, 2), (std::vector<float>{1, 2}));
  EXPECT_EQ(floats(0, 3), (std::vector<float>{3}));
  EXPECT_EQ(floats(1, 3), (std::vector<float>{5}));
}

TEST(StablehloOpFamilies, F8TypesParseLowerAndConvert) {
  // f8 values are priced, not computed (docs/stablehlo.md): the module lowers with its types.
  Result<hlo::Module> m = ParseStableHlo(R"(
func.func @main(%a: tensor<4xf8E4M3FN>, %b: tensor<4xf8E5M2>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0, 0.5, -448.0]> : tensor<4xf8E4M3FN>
  %s = stablehlo.add %a, %c : tensor<4xf8E4M3FN>
  %x = stablehlo.convert %s : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  %y = stablehlo.convert %b : (tensor<4xf8E5M2>) -> tensor<4xf32>
  %r = stablehlo.add %x, %y : tensor<4xf32>
  return %r : tensor<4xf32>
}
)");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::Computation& e = m->entry_computation();
  EXPECT_EQ(e.instructions[static_cast<size_t>(e.parameters[0])].shape.type,
            hlo::PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(e.instructions[static_cast<size_t>(e.parameters[1])].shape.type,
            hlo::PrimitiveType::kF8E5M2);
  Status run = hlo::CheckEvaluable(*m);
  EXPECT_EQ(run.code(), StatusCode::kUnimplemented);
  EXPECT_NE(run.message().find("f8e4m3fn"), std::string::npos) << run.message();
}

// torch_xla.stablehlo's get_stablehlo_text(): a `module @IrToHlo.N` with `func.func @main`, the
// graph's parameters as %arg0..., stablehlo ops with `loc(#locN)` trailers and `#locN = loc(...)`
// aliases, and a tuple-free multi-result return.
TEST(StablehloOpFamilies, TorchXlaExportedText) {
  ExpectChecksPass(R"(
#loc = loc(unknown)
#loc1 = loc("aten__addmm")
module @IrToHlo.16 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main() {
    %w = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32> loc(#loc)
    %x = stablehlo.constant dense<[[1.0, 1.0]]> : tensor<1x2xf32> loc(#loc)
    %b = stablehlo.constant dense<[0.5, -0.5]> : tensor<2xf32> loc(#loc)
    %0 = stablehlo.transpose %w, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[2,2]{0,1}"} : (tensor<2x2xf32>) -> tensor<2x2xf32> loc(#loc1)
    %1 = stablehlo.dot_general %x, %0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32> loc(#loc1)
    %2 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32> loc(#loc1)
    %3 = stablehlo.add %1, %2 : tensor<1x2xf32> loc(#loc1)
    check.expect_eq_const %3, dense<[[3.5, 6.5]]> : tensor<1x2xf32>
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
)",
                   1);
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
