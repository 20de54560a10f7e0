// The shape of JAX's StableHLO test cases (jax.jit(f).lower(*args).as_text() with the inputs
// and expected outputs as private functions; jax/experimental/jax2tf tests print them so).
module @jit_testcase attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<i1> {jax.result_info = ""}) {
    %0 = call @inputs() : () -> tensor<2x3xf32>
    %1 = call @expected() : () -> tensor<2x3xf32>
    %2 = stablehlo.abs %0 : tensor<2x3xf32>
    %3 = stablehlo.custom_call @check.eq(%2, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<i1>
    return %3 : tensor<i1>
  }
  func.func private @inputs() -> (tensor<2x3xf32> {mhlo.sharding = ""}) {
    %cst = stablehlo.constant dense<"0x0000C0BF0000004000000080000050400000E0C00000003F"> : tensor<2x3xf32>
    return %cst : tensor<2x3xf32>
  }
  func.func private @expected() -> (tensor<2x3xf32> {mhlo.sharding = ""}) {
    %cst = stablehlo.constant dense<"0x0000C03F0000004000000000000050400000E0400000003F"> : tensor<2x3xf32>
    return %cst : tensor<2x3xf32>
  }
}
