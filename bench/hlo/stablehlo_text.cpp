#include "bench/hlo/stablehlo_text.h"

namespace tpuemu::engine::hlo {

std::string StableHloBenchModule(size_t min_bytes) {
  const std::string act = "tensor<64x256xf32>";
  std::string blob = "0x";
  for (int k = 0; k < 256; ++k) blob += "0000803F";
  std::string body;
  std::string h = "%arg0";
  for (int layer = 0; body.size() < min_bytes; ++layer) {
    const std::string l = std::to_string(layer);
    body += "    %b" + l + " = stablehlo.constant dense<\"" + blob + "\"> : tensor<256xf32>\n";
    body += "    %d" + l + " = stablehlo.dot_general " + h +
            ", %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (" + act +
            ", tensor<256x256xf32>) -> " + act + "\n";
    body += "    %e" + l + " = stablehlo.broadcast_in_dim %b" + l +
            ", dims = [1] : (tensor<256xf32>) -> " + act + "\n";
    body += "    %a" + l + " = stablehlo.add %d" + l + ", %e" + l + " : " + act + "\n";
    body += "    %t" + l + " = stablehlo.tanh %a" + l + " : " + act + "\n";
    body += "    %r" + l + " = stablehlo.reduce(%t" + l +
            " init: %cst) applies stablehlo.add across dimensions = [1] : (" + act +
            ", tensor<f32>) -> tensor<64xf32>\n";
    body += "    %s" + l + " = stablehlo.broadcast_in_dim %r" + l +
            ", dims = [0] : (tensor<64xf32>) -> " + act + "\n";
    body += "    %h" + l + " = stablehlo.subtract %t" + l + ", %s" + l + " : " + act + "\n";
    h = "%h" + l;
  }
  return "module @jit_mlp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} "
         "{\n"
         "  func.func public @main(%arg0: " +
         act +
         " {mhlo.layout_mode = \"default\"}, %arg1: "
         "tensor<256x256xf32> {mhlo.layout_mode = \"default\"}) -> (" +
         act +
         " {jax.result_info = \"\"}) {\n"
         "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n" +
         body + "    return " + h + " : " + act + "\n  }\n}\n";
}

}  // namespace tpuemu::engine::hlo
