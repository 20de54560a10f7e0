// Shape and data-movement ops with the StableHLO specification's examples.
#include "tests/engine/stablehlo/stablehlo_test_util.h"

namespace tpuemu::engine::stablehlo {
namespace {

TEST(StablehloDataMovement, BroadcastTransposeReshapeReverseIota) {
  ExpectChecksPass(R"(
func.func @main() {
  %op = stablehlo.constant dense<[[1, 2, 3]]> : tensor<1x3xi32>
  %b = stablehlo.broadcast_in_dim %op, dims = [2, 1] : (tensor<1x3xi32>) -> tensor<2x3x2xi32>
  check.expect_eq_const %b, dense<[[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]]> : tensor<2x3x2xi32>
  %t = stablehlo.constant dense<[[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]]> : tensor<2x3x2xi32>
  %tr = stablehlo.transpose %t, dims = [1, 0, 2] : (tensor<2x3x2xi32>) -> tensor<3x2x2xi32>
  check.expect_eq_const %tr, dense<[[[1, 2], [7, 8]], [[3, 4], [9, 10]], [[5, 6], [11, 12]]]> : tensor<3x2x2xi32>
  %m = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %r = stablehlo.reshape %m : (tensor<2x3xi32>) -> tensor<6xi32>
  check.expect_eq_const %r, dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %v = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
  %rev = stablehlo.reverse %v, dims = [1] : tensor<3x2xi32>
  check.expect_eq_const %rev, dense<[[2, 1], [4, 3], [6, 5]]> : tensor<3x2xi32>
  %io = stablehlo.iota dim = 0 : tensor<4x2xi32>
  check.expect_eq_const %io, dense<[[0, 0], [1, 1], [2, 2], [3, 3]]> : tensor<4x2xi32>
  %bs = stablehlo.broadcast %op, sizes = [2] : (tensor<1x3xi32>) -> tensor<2x1x3xi32>
  check.expect_eq_const %bs, dense<[[[1, 2, 3]], [[1, 2, 3]]]> : tensor<2x1x3xi32>
  func.return
}
)",
                   6);
}

TEST(StablehloDataMovement, SliceConcatenatePadDynamicSlices) {
  ExpectChecksPass(R"(
func.func @main() {
  %o = stablehlo.constant dense<[[0, 0, 1, 0, 0, 1], [0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 1]]> : tensor<3x6xi64>
  %s = stablehlo.slice %o [0:3:2, 2:6:3] : (tensor<3x6xi64>) -> tensor<2x2xi64>
  check.expect_eq_const %s, dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>
  %g = "stablehlo.slice"(%o) <{start_indices = array<i64: 0, 2>, limit_indices = array<i64: 3, 6>, strides = array<i64: 2, 3>}> : (tensor<3x6xi64>) -> tensor<2x2xi64>
  check.expect_eq_const %g, dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>
  %a = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  %b = stablehlo.constant dense<[[7, 8]]> : tensor<1x2xi64>
  %c = stablehlo.concatenate %a, %b, dim = 0 : (tensor<3x2xi64>, tensor<1x2xi64>) -> tensor<4x2xi64>
  check.expect_eq_const %c, dense<[[1, 2], [3, 4], [5, 6], [7, 8]]> : tensor<4x2xi64>
  %p = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %z = stablehlo.constant dense<0> : tensor<i64>
  %pad = stablehlo.pad %p, %z, low = [0, 1], high = [2, 1], interior = [1, 2] : (tensor<2x3xi64>, tensor<i64>) -> tensor<5x9xi64>
  check.expect_eq_const %pad, dense<[[0, 1, 0, 0, 2, 0, 0, 3, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 4, 0, 0, 5, 0, 0, 6, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]]> : tensor<5x9xi64>
  %d = stablehlo.constant dense<[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]]> : tensor<4x4xi32>
  %i0 = stablehlo.constant dense<-1> : tensor<i64>
  %i1 = stablehlo.constant dense<3> : tensor<i64>
  %ds = stablehlo.dynamic_slice %d, %i0, %i1, sizes = [2, 2] : (tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>
  check.expect_eq_const %ds, dense<[[1, 1], [1, 1]]> : tensor<2x2xi32>
  %u = stablehlo.constant dense<[[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]]> : tensor<4x4xi32>
  %upd = stablehlo.constant dense<1> : tensor<2x2xi32>
  %dus = stablehlo.dynamic_update_slice %u, %upd, %i0, %i1 : (tensor<4x4xi32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<4x4xi32>
  check.expect_eq_const %dus, dense<1> : tensor<4x4xi32>
  func.return
}
)",
                   6);
}

TEST(StablehloDataMovement, GatherAndScatter) {
  ExpectChecksPass(R"(
func.func @main() {
  %op = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
  %idx = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi64>
  %g = "stablehlo.gather"(%op, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2>}> : (tensor<3x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
  check.expect_eq_const %g, dense<[[5, 6], [1, 2]]> : tensor<2x2xi32>
  %in = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %si = stablehlo.constant dense<[[1], [3], [1]]> : tensor<3x1xi32>
  %up = stablehlo.constant dense<[10, 20, 30]> : tensor<3xi32>
  %s = "stablehlo.scatter"(%in, %si, %up) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %sum = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %sum : tensor<i32>
  }) : (tensor<4xi32>, tensor<3x1xi32>, tensor<3xi32>) -> tensor<4xi32>
  check.expect_eq_const %s, dense<[1, 42, 3, 24]> : tensor<4xi32>
  func.return
}
)",
                   2);
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
