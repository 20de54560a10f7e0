// The JSON program format: JSON <-> Graph.
//
// A program is an object with a name, ops in topological order (an op may only use ids defined
// before it) and the ids of its outputs. Example (an MLP forward pass + loss):
//
//   {
//     "name": "mlp",
//     "ops": [
//       {"id": "x", "op": "parameter", "shape": [64, 128], "dtype": "f32"},
//       {"id": "labels", "op": "parameter", "shape": [64], "dtype": "int32",
//        "values": [0, 1, ...]},
//       {"id": "w", "op": "constant", "shape": [128, 10],
//        "random": {"seed": 1, "distribution": "normal", "scale": 0.02}},
//       {"id": "b", "op": "constant", "shape": [10], "fill": 0.1},
//       {"id": "y", "op": "dot", "inputs": ["x", "w"]},
//       {"id": "z", "op": "add", "inputs": ["y", "b"]},
//       {"id": "r", "op": "relu", "inputs": ["z"]},
//       {"id": "loss", "op": "softmax_cross_entropy", "inputs": ["r", "labels"]}
//     ],
//     "outputs": ["r", "loss"]
//   }
//
// Op fields (all optional unless the op needs them; dtype defaults to "f32"):
//   parameter, constant: "shape", "dtype" ("f32" | "bf16" | "int32") and one of
//     "random": {"seed": 7, "distribution": "normal" | "uniform", "scale": 0.02}
//     (normal: stddev = scale; uniform: [-scale, scale); defaults seed 0, normal, scale 1),
//     "values": [flat row-major numbers], "fill": 0.0.
//     A constant needs one; a parameter is fed at execution and falls back to it when not fed.
//   dot: "transpose_lhs", "transpose_rhs" (bool). lhs [..., m, k] · rhs [..., k, n].
//   conv2d (inputs x NHWC, filter HWIO), conv2d_backprop_input (inputs filter, dy; "shape" = x's),
//   conv2d_backprop_filter (inputs x, dy; "shape" = filter's):
//     "strides": [sh, sw] (default [1, 1]), "padding": "VALID" | "SAME" | [top, bottom, left,
//     right].
//   add, sub, mul, div, max, min (numpy broadcasting); neg, relu, gelu, tanh, exp, log, rsqrt;
//   relu_grad, gelu_grad (inputs x, dy).
//   softmax: "axis" (default -1). reduce: "reduce": "sum" | "max" | "mean", "axes" (default all),
//   "keep_dims". broadcast: "shape", optional "broadcast_dims" (else numpy-style).
//   reshape: "shape" (one -1 allowed). transpose: "perm". concat: "axis" (default 0).
//   slice: "start", "limit". convert: "dtype".
//   softmax_cross_entropy (inputs logits f32[b,c], labels int32[b] -> f32[] batch mean),
//   softmax_cross_entropy_grad (same inputs -> f32[b,c]).
//
// Errors are INVALID_ARGUMENT naming the op id and the field ("op 'w' (#2): field 'shape' must be
// an array of integers"); an unknown op lists the known ones. Limits: ParseOptions below.
// Stateless functions: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/frontend/ir.h"

namespace tpuemu::engine {

struct ParseOptions {
  int64_t max_ops = 10000;
  int max_depth = 64;  // nesting of JSON arrays/objects in the text
  int64_t max_tensor_elements = int64_t{1} << 26;
  int64_t max_text_bytes = int64_t{256} << 20;
};

// Parses and validates a program (every op's shape is inferred, see ir.h).
Result<Graph> ParseProgram(std::string_view json_text, const ParseOptions& options = {});
Result<Graph> ProgramFromJson(const nlohmann::json& program, const ParseOptions& options = {});
// The inverse: ParseProgram(ProgramToJson(g).dump()) rebuilds an equal graph.
nlohmann::json ProgramToJson(const Graph& graph);

}  // namespace tpuemu::engine
