#include "engine/stablehlo/op_table.h"

#include <algorithm>
#include <utility>

namespace tpuemu::engine::stablehlo {
namespace {

using hlo::Opcode;

const std::pair<const char*, Opcode> kSimple[] = {
    {"abs", Opcode::kAbs},
    {"add", Opcode::kAdd},
    {"and", Opcode::kAnd},
    {"atan2", Opcode::kAtan2},
    {"bitcast_convert", Opcode::kBitcastConvert},
    {"cbrt", Opcode::kCbrt},
    {"ceil", Opcode::kCeil},
    {"clamp", Opcode::kClamp},
    {"complex", Opcode::kComplex},
    {"convert", Opcode::kConvert},
    {"cosine", Opcode::kCos},
    {"count_leading_zeros", Opcode::kClz},
    {"divide", Opcode::kDivide},
    {"dynamic_update_slice", Opcode::kDynamicUpdateSlice},
    {"exponential", Opcode::kExp},
    {"exponential_minus_one", Opcode::kExpm1},
    {"floor", Opcode::kFloor},
    {"imag", Opcode::kImag},
    {"is_finite", Opcode::kIsFinite},
    {"log", Opcode::kLog},
    {"log_plus_one", Opcode::kLog1p},
    {"logistic", Opcode::kLogistic},
    {"maximum", Opcode::kMaximum},
    {"minimum", Opcode::kMinimum},
    {"multiply", Opcode::kMultiply},
    {"negate", Opcode::kNegate},
    {"not", Opcode::kNot},
    {"or", Opcode::kOr},
    {"popcnt", Opcode::kPopulationCount},
    {"power", Opcode::kPower},
    {"real", Opcode::kReal},
    {"remainder", Opcode::kRemainder},
    {"reshape", Opcode::kReshape},
    {"round_nearest_afz", Opcode::kRoundNearestAfz},
    {"round_nearest_even", Opcode::kRoundNearestEven},
    {"rsqrt", Opcode::kRsqrt},
    {"select", Opcode::kSelect},
    {"shift_left", Opcode::kShiftLeft},
    {"shift_right_arithmetic", Opcode::kShiftRightArithmetic},
    {"shift_right_logical", Opcode::kShiftRightLogical},
    {"sign", Opcode::kSign},
    {"sine", Opcode::kSin},
    {"sqrt", Opcode::kSqrt},
    {"subtract", Opcode::kSubtract},
    {"tan", Opcode::kTan},
    {"tanh", Opcode::kTanh},
    {"xor", Opcode::kXor},
};

// Ops with a lowering of their own (lower_ops.cpp, lower.cpp, lower_windows.cpp,
// lower_collectives.cpp): op, what it becomes.
const std::pair<const char*, const char*> kStructured[] = {
    {"stablehlo.after_all", "after-all"},
    {"stablehlo.all_gather", "all-gather"},
    {"stablehlo.all_reduce", "all-reduce (region: to_apply)"},
    {"stablehlo.all_to_all", "all-to-all (split_dimension = concat_dimension)"},
    {"stablehlo.batch_norm_grad", "batch-norm-grad"},
    {"stablehlo.batch_norm_inference", "batch-norm-inference"},
    {"stablehlo.batch_norm_training", "batch-norm-training"},
    {"stablehlo.broadcast", "broadcast"},
    {"stablehlo.broadcast_in_dim", "broadcast"},
    {"stablehlo.case", "conditional (s32 index; captured values passed in)"},
    {"stablehlo.collective_broadcast", "collective-broadcast"},
    {"stablehlo.collective_permute", "collective-permute"},
    {"stablehlo.compare", "compare (direction, type)"},
    {"stablehlo.composite", "call of its decomposition"},
    {"stablehlo.concatenate", "concatenate"},
    {"stablehlo.constant", "constant (every dense form)"},
    {"stablehlo.convolution", "convolution"},
    {"stablehlo.create_token", "after-all"},
    {"stablehlo.custom_call", "custom-call (Sharding passes through; check.expect_* are checks)"},
    {"stablehlo.dot", "dot"},
    {"stablehlo.dot_general", "dot"},
    {"stablehlo.dynamic_slice", "dynamic-slice"},
    {"stablehlo.gather", "gather"},
    {"stablehlo.get_dimension_size", "get-dimension-size"},
    {"stablehlo.get_tuple_element", "get-tuple-element"},
    {"stablehlo.if", "conditional (pred; captured values passed in)"},
    {"stablehlo.iota", "iota"},
    {"stablehlo.map", "map"},
    {"stablehlo.optimization_barrier", "opt-barrier"},
    {"stablehlo.pad", "pad"},
    {"stablehlo.partition_id", "partition-id"},
    {"stablehlo.reduce", "reduce (region: to_apply)"},
    {"stablehlo.reduce_precision", "reduce-precision"},
    {"stablehlo.reduce_scatter", "reduce-scatter"},
    {"stablehlo.reduce_window", "reduce-window"},
    {"stablehlo.replica_id", "replica-id"},
    {"stablehlo.reverse", "reverse"},
    {"stablehlo.rng", "rng"},
    {"stablehlo.rng_bit_generator", "rng-bit-generator"},
    {"stablehlo.scatter", "scatter"},
    {"stablehlo.select_and_scatter", "select-and-scatter"},
    {"stablehlo.slice", "slice"},
    {"stablehlo.sort", "sort"},
    {"stablehlo.transpose", "transpose"},
    {"stablehlo.tuple", "tuple"},
    {"stablehlo.while", "while (loop values and captured values in one tuple)"},
    {"func.call", "call"},
    {"chlo.acos", "acos"},
    {"chlo.acosh", "acosh"},
    {"chlo.asin", "asin"},
    {"chlo.asinh", "asinh"},
    {"chlo.atan", "atan"},
    {"chlo.atanh", "atanh"},
    {"chlo.bessel_i1e", "Cephes' Chebyshev series in f32, as XLA's chlo legalization"},
    {"chlo.broadcast_*", "broadcast + the elementwise op (numpy broadcasting)"},
    {"chlo.constant", "constant"},
    {"chlo.constant_like", "constant broadcast to the operand's shape"},
    {"chlo.conj", "complex(real, negate(imag))"},
    {"chlo.cosh", "cosh"},
    {"chlo.digamma", "Lanczos series + reflection in f32, as XLA's chlo legalization"},
    {"chlo.erf", "erf"},
    {"chlo.erf_inv", "Giles' polynomials in f32, as XLA's chlo legalization"},
    {"chlo.erfc", "Cephes polynomials in f32, as XLA's chlo legalization"},
    {"chlo.is_inf", "abs + compare EQ inf"},
    {"chlo.is_neg_inf", "compare EQ -inf"},
    {"chlo.is_pos_inf", "compare EQ +inf"},
    {"chlo.lgamma", "Lanczos series + reflection in f32, as XLA's chlo legalization"},
    {"chlo.next_after", "integer steps on the bits (bitcast-convert), as XLA's chlo legalization"},
    {"chlo.polygamma", "(-1)^(n+1) n! zeta(n+1, x), digamma at n = 0, as XLA's chlo legalization"},
    {"chlo.sinh", "sinh"},
    {"chlo.square", "multiply(x, x)"},
    {"chlo.tan", "tan"},
    {"chlo.top_k", "topk"},
    {"chlo.zeta", "Euler-Maclaurin (Johansson) in f32, as XLA's chlo legalization"},
};

const std::pair<const char*, const char*> kRefused[] = {
    {"cholesky", "the HLO evaluator has no cholesky"},
    {"triangular_solve", "the HLO evaluator has no triangular-solve"},
    {"fft", "the HLO evaluator has no fft"},
    {"dynamic_broadcast_in_dim", "dynamic shapes: tpuemu runs static shapes, as XLA compiles them"},
    {"dynamic_conv", "dynamic shapes"},
    {"dynamic_gather", "dynamic shapes"},
    {"dynamic_iota", "dynamic shapes"},
    {"dynamic_pad", "dynamic shapes"},
    {"dynamic_reshape", "dynamic shapes"},
    {"real_dynamic_slice", "dynamic shapes"},
    {"set_dimension_size", "dynamic shapes"},
    {"compute_reshape_shape", "dynamic shapes"},
    {"cstr_reshapable", "dynamic shapes"},
    {"uniform_quantize", "quantized types: the HLO stack has none"},
    {"uniform_dequantize", "quantized types: the HLO stack has none"},
    {"einsum", "deprecated and not in the StableHLO opset XLA takes"},
    {"unary_einsum", "deprecated and not in the StableHLO opset XLA takes"},
    {"torch_index_select", "deprecated and not in the StableHLO opset XLA takes"},
    {"infeed", "host transfer ops need a host: not emulated"},
    {"outfeed", "host transfer ops need a host: not emulated"},
    {"send", "host transfer ops need a host: not emulated"},
    {"recv", "host transfer ops need a host: not emulated"},
    {"trace", "deprecated"},
};

}  // namespace

std::optional<hlo::Opcode> SimpleOpcode(std::string_view op) {
  for (const auto& [name, opcode] : kSimple) {
    if (op == name) return opcode;
  }
  return std::nullopt;
}

std::string_view SimpleOpName(hlo::Opcode opcode) {
  for (const auto& [name, op] : kSimple) {
    if (op == opcode) return name;
  }
  return {};
}

bool IsCollectiveOp(std::string_view op) {
  return op == "all_reduce" || op == "all_gather" || op == "reduce_scatter" || op == "all_to_all" ||
         op == "collective_permute" || op == "collective_broadcast";
}

std::string RefusalReason(std::string_view op) {
  for (const auto& [name, why] : kRefused) {
    if (op == name) return why;
  }
  return "not a StableHLO op tpuemu knows";
}

std::vector<OpRow> OpTable() {
  std::vector<OpRow> rows;
  for (const auto& [name, opcode] : kSimple) {
    rows.push_back(
        {std::string("stablehlo.") + name, std::string(hlo::OpcodeName(opcode)), true, ""});
  }
  for (const auto& [name, hlo] : kStructured) rows.push_back({name, hlo, true, ""});
  for (const auto& [name, why] : kRefused) {
    if (std::string_view(why).empty()) continue;
    const std::string full =
        std::string_view(name).substr(0, 5) == "chlo." ? name : std::string("stablehlo.") + name;
    rows.push_back({full, "", false, why});
  }
  std::sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) { return a.op < b.op; });
  return rows;
}

std::string OpTableMarkdown() {
  std::string out = "| op | lowers to | refused because |\n|---|---|---|\n";
  for (const OpRow& r : OpTable()) {
    out += "| `" + r.op + "` | " + (r.supported ? r.hlo : "—") + " | " + r.note + " |\n";
  }
  return out;
}

}  // namespace tpuemu::engine::stablehlo
