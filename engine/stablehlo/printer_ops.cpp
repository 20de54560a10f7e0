// Each HLO instruction as its StableHLO op (the StableHLO specification's op of XLA's opcode, with
// the attribute names the front end reads: lower_ops.cpp, lower_windows.cpp,
// lower_collectives.cpp); printer_literals.cpp prints types and constants.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/hlo/array.h"
#include "engine/stablehlo/op_table.h"
#include "engine/stablehlo/printer.h"
#include "engine/stablehlo/printer_internal.h"

namespace tpuemu::engine::stablehlo {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

namespace internal {

Status Printer::PrintOp(Body& body, int i) {
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  const hlo::Attributes& a = inst.a();
  const Opcode op = inst.opcode;
  const hlo::Computation& c = *body.comp;
  auto shape_of = [&](int o) -> const Shape& {
    return c.instructions[static_cast<size_t>(o)].shape;
  };
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(inst.Describe() + ": " + why);
  };
  std::vector<std::string> operands;
  std::vector<Shape> operand_types;
  for (int o : inst.operands) {
    Result<std::string> w = Whole(body, o);
    if (!w.ok()) return w.status();
    operands.push_back(*w);
    operand_types.push_back(shape_of(o));
  }
  std::string name;
  std::vector<std::string> attrs, regions;
  bool split = false;  // a tuple result as several results
  auto region = [&](int comp) -> Status {
    Result<std::string> r = FlatRegion(comp, body.indent);
    if (!r.ok()) return r.status();
    regions.push_back(*r);
    return Status::Ok();
  };

  if (op == Opcode::kConstant) {
    Result<std::string> dense = DenseText(inst);
    if (!dense.ok()) return dense.status();
    Result<std::string> type = TypeText(inst.shape);
    if (!type.ok()) return type.status();
    const std::string lhs = DefineResults(body, i, static_cast<size_t>(-1));
    Line(body, lhs + " = stablehlo.constant " + *dense + " : " + *type);
    return Status::Ok();
  }
  const std::string_view simple = SimpleOpName(op);
  if (!simple.empty()) {
    bool same = true;
    for (const Shape& t : operand_types) same &= hlo::Compatible(t, inst.shape) && t.IsArray();
    if (same && !operands.empty() && op != Opcode::kReshape && op != Opcode::kConvert) {
      Result<std::string> type = TypeText(inst.shape);
      if (!type.ok()) return type.status();
      const std::string lhs = DefineResults(body, i, static_cast<size_t>(-1));
      Line(body,
           lhs + " = stablehlo." + std::string(simple) + " " + JoinText(operands) + " : " + *type);
      return Status::Ok();
    }
    name = "stablehlo." + std::string(simple);
  } else if (!ChloName(op).empty()) {
    name = "chlo." + std::string(ChloName(op));
  } else {
    switch (op) {
      case Opcode::kCopy:
        name = "stablehlo.reshape";  // StableHLO has no copy: the same values
        break;
      case Opcode::kBitcast: {
        const Shape& in = shape_of(inst.operands[0]);
        if (in.Layout() != Shape::Array(in.type, in.dims).Layout() ||
            inst.shape.Layout() != Shape::Array(inst.shape.type, inst.shape.dims).Layout()) {
          return refuse("a bitcast across layouts has no StableHLO form");
        }
        if (in.type == inst.shape.type) {
          name = "stablehlo.reshape";
        } else if (in.dims == inst.shape.dims) {
          name = "stablehlo.bitcast_convert";
        } else {
          return refuse("a bitcast that changes both element type and shape");
        }
        break;
      }
      case Opcode::kIota:
        name = "stablehlo.iota";
        attrs.push_back("iota_dimension = " + IntAttr(inst.index));
        break;
      case Opcode::kBroadcast:
        name = "stablehlo.broadcast_in_dim";
        attrs.push_back("broadcast_dimensions = " + I64Array(inst.dimensions));
        break;
      case Opcode::kTranspose:
        name = "stablehlo.transpose";
        attrs.push_back("permutation = " + I64Array(inst.dimensions));
        break;
      case Opcode::kReverse:
        name = "stablehlo.reverse";
        attrs.push_back("dimensions = " + I64Array(inst.dimensions));
        break;
      case Opcode::kConcatenate:
        name = "stablehlo.concatenate";
        attrs.push_back("dimension = " + IntAttr(inst.dimensions.at(0)));
        break;
      case Opcode::kSlice: {
        name = "stablehlo.slice";
        std::vector<int64_t> strides = a.slice_stride;
        strides.resize(a.slice_start.size(), 1);
        attrs = {"start_indices = " + I64Array(a.slice_start),
                 "limit_indices = " + I64Array(a.slice_limit), "strides = " + I64Array(strides)};
        break;
      }
      case Opcode::kDynamicSlice:
        name = "stablehlo.dynamic_slice";
        attrs.push_back("slice_sizes = " + I64Array(a.dynamic_slice_sizes));
        break;
      case Opcode::kPad: {
        name = "stablehlo.pad";
        std::vector<int64_t> low, high, interior;
        for (const hlo::PadDim& p : a.padding) {
          low.push_back(p.low);
          high.push_back(p.high);
          interior.push_back(p.interior);
        }
        attrs = {"edge_padding_low = " + I64Array(low), "edge_padding_high = " + I64Array(high),
                 "interior_padding = " + I64Array(interior)};
        break;
      }
      case Opcode::kCompare: {
        name = "stablehlo.compare";
        attrs.push_back("comparison_direction = #stablehlo<comparison_direction " +
                        std::string(DirectionWord(a.direction)) + ">");
        static const char* kTypes[] = {"", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
        const char* t = kTypes[static_cast<int>(a.compare_type)];
        if (*t)
          attrs.push_back(std::string("compare_type = #stablehlo<comparison_type ") + t + ">");
        break;
      }
      case Opcode::kDot: {
        if (!a.sparsity.empty()) return refuse("a sparse dot has no StableHLO form");
        if (inst.precision == hlo::DotPrecision::kF32) {
          return refuse("the f32 dot algorithm is not printed (the front end reads precision)");
        }
        name = "stablehlo.dot_general";
        const hlo::DotDims& d = a.dot;
        attrs.push_back("dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [" +
                        I64s(d.lhs_batch) + "], rhs_batching_dimensions = [" + I64s(d.rhs_batch) +
                        "], lhs_contracting_dimensions = [" + I64s(d.lhs_contracting) +
                        "], rhs_contracting_dimensions = [" + I64s(d.rhs_contracting) + "]>");
        if (inst.precision != hlo::DotPrecision::kUnset) {
          attrs.push_back(PrecisionConfig(inst.precision));
        }
        break;
      }
      case Opcode::kConvolution: {
        if (inst.precision == hlo::DotPrecision::kF32) {
          return refuse("the f32 dot algorithm is not printed (the front end reads precision)");
        }
        name = "stablehlo.convolution";
        const hlo::ConvDims& d = a.conv;
        attrs.push_back(
            "dimension_numbers = #stablehlo.conv<" +
            ConvLabels('b', d.input_batch, 'f', d.input_feature, d.input_spatial) + "x" +
            ConvLabels('i', d.kernel_input_feature, 'o', d.kernel_output_feature,
                       d.kernel_spatial) +
            "->" + ConvLabels('b', d.output_batch, 'f', d.output_feature, d.output_spatial) + ">");
        WindowAttrs(a.window, "lhs_dilation", "rhs_dilation", attrs);
        attrs.push_back("feature_group_count = " + IntAttr(a.feature_group_count));
        attrs.push_back("batch_group_count = " + IntAttr(a.batch_group_count));
        if (inst.precision != hlo::DotPrecision::kUnset) {
          attrs.push_back(PrecisionConfig(inst.precision));
        }
        break;
      }
      case Opcode::kReduce:
        name = "stablehlo.reduce";
        attrs.push_back("dimensions = " + I64Array(inst.dimensions));
        TPUEMU_RETURN_IF_ERROR(region(inst.called.at(0)));
        split = true;
        break;
      case Opcode::kReduceWindow: {
        name = "stablehlo.reduce_window";
        std::vector<int64_t> sizes;
        for (const hlo::WindowDim& w : a.window) sizes.push_back(w.size);
        attrs.push_back("window_dimensions = " + I64Array(sizes));
        WindowAttrs(a.window, "base_dilations", "window_dilations", attrs);
        TPUEMU_RETURN_IF_ERROR(region(inst.called.at(0)));
        split = true;
        break;
      }
      case Opcode::kSelectAndScatter: {
        name = "stablehlo.select_and_scatter";
        std::vector<int64_t> sizes;
        for (const hlo::WindowDim& w : a.window) {
          sizes.push_back(w.size);
          if (w.base_dilation != 1 || w.window_dilation != 1 || w.reversal) {
            return refuse("select_and_scatter has no dilations in StableHLO");
          }
        }
        attrs.push_back("window_dimensions = " + I64Array(sizes));
        WindowAttrs(a.window, "-", "-", attrs);
        TPUEMU_RETURN_IF_ERROR(region(inst.called.at(0)));
        TPUEMU_RETURN_IF_ERROR(region(inst.called.at(1)));
        break;
      }
      case Opcode::kSort:
        name = "stablehlo.sort";
        attrs.push_back("dimension = " + IntAttr(inst.dimensions.at(0)));
        if (a.is_stable) attrs.push_back("is_stable = true");
        TPUEMU_RETURN_IF_ERROR(region(inst.called.at(0)));
        split = true;
        break;
      case Opcode::kMap:
        name = "stablehlo.map";
        attrs.push_back("dimensions = " + I64Array(inst.dimensions));
        TPUEMU_RETURN_IF_ERROR(region(inst.called.at(0)));
        break;
      case Opcode::kGather: {
        name = "stablehlo.gather";
        const hlo::GatherDims& g = a.gather;
        attrs.push_back("dimension_numbers = #stablehlo.gather<offset_dims = [" +
                        I64s(g.offset_dims) + "], collapsed_slice_dims = [" +
                        I64s(g.collapsed_slice_dims) + "], operand_batching_dims = [" +
                        I64s(g.operand_batching_dims) + "], start_indices_batching_dims = [" +
                        I64s(g.start_indices_batching_dims) + "], start_index_map = [" +
                        I64s(g.start_index_map) +
                        "], index_vector_dim = " + std::to_string(g.index_vector_dim) + ">");
        attrs.push_back("slice_sizes = " + I64Array(g.slice_sizes));
        break;
      }
      case Opcode::kScatter: {
        name = "stablehlo.scatter";
        const hlo::ScatterDims& s = a.scatter;
        attrs.push_back("scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [" +
                        I64s(s.update_window_dims) + "], inserted_window_dims = [" +
                        I64s(s.inserted_window_dims) + "], input_batching_dims = [" +
                        I64s(s.input_batching_dims) + "], scatter_indices_batching_dims = [" +
                        I64s(s.scatter_indices_batching_dims) +
                        "], scatter_dims_to_operand_dims = [" +
                        I64s(s.scatter_dims_to_operand_dims) +
                        "], index_vector_dim = " + std::to_string(s.index_vector_dim) + ">");
        TPUEMU_RETURN_IF_ERROR(region(inst.called.at(0)));
        split = true;
        break;
      }
      case Opcode::kGetDimensionSize:
        name = "stablehlo.get_dimension_size";
        attrs.push_back("dimension = " + IntAttr(inst.dimensions.at(0)));
        break;
      case Opcode::kReducePrecision:
        name = "stablehlo.reduce_precision";
        attrs = {"exponent_bits = " + IntAttr(a.exponent_bits, "i32"),
                 "mantissa_bits = " + IntAttr(a.mantissa_bits, "i32")};
        break;
      case Opcode::kRng: {
        name = "stablehlo.rng";
        // The result's shape as a third operand, a 1-D i64 constant.
        const std::string shape = Fresh();
        Shape shape_type = Shape::Array(PrimitiveType::kS64, {inst.shape.rank()});
        Line(body, shape + " = stablehlo.constant dense<[" + I64s(inst.shape.dims) +
                       "]> : tensor<" + std::to_string(inst.shape.rank()) + "xi64>");
        operands.push_back(shape);
        operand_types.push_back(shape_type);
        attrs.push_back(std::string("rng_distribution = #stablehlo<rng_distribution ") +
                        (a.distribution == "rng_normal" ? "NORMAL" : "UNIFORM") + ">");
        break;
      }
      case Opcode::kRngBitGenerator:
        name = "stablehlo.rng_bit_generator";
        attrs.push_back(std::string("rng_algorithm = #stablehlo<rng_algorithm ") +
                        (a.rng_algorithm == hlo::RngAlgorithm::kThreeFry ? "THREE_FRY"
                         : a.rng_algorithm == hlo::RngAlgorithm::kPhilox ? "PHILOX"
                                                                         : "DEFAULT") +
                        ">");
        split = true;
        break;
      case Opcode::kPartitionId:
        name = "stablehlo.partition_id";
        break;
      case Opcode::kReplicaId:
        name = "stablehlo.replica_id";
        break;
      case Opcode::kAfterAll:
        name = "stablehlo.after_all";
        break;
      case Opcode::kBatchNormInference:
      case Opcode::kBatchNormTraining:
      case Opcode::kBatchNormGrad:
        name = op == Opcode::kBatchNormInference  ? "stablehlo.batch_norm_inference"
               : op == Opcode::kBatchNormTraining ? "stablehlo.batch_norm_training"
                                                  : "stablehlo.batch_norm_grad";
        attrs = {"epsilon = " + FloatText(a.epsilon) + " : f32",
                 "feature_index = " + IntAttr(a.feature_index)};
        split = true;
        break;
      case Opcode::kTopK:
        if (!a.largest) return refuse("a topk of the smallest has no StableHLO form");
        name = "chlo.top_k";
        attrs.push_back("k = " + IntAttr(a.k));
        split = true;
        break;
      case Opcode::kCustomCall:
        if (!inst.called.empty()) {
          return refuse("a custom-call with called computations is not printed");
        }
        name = "stablehlo.custom_call";
        attrs.push_back("call_target_name = " + Quoted(a.custom_call_target));
        split = true;
        break;
      case Opcode::kAllReduce:
      case Opcode::kReduceScatter:
        name = op == Opcode::kAllReduce ? "stablehlo.all_reduce" : "stablehlo.reduce_scatter";
        if (op == Opcode::kReduceScatter) {
          attrs.push_back("scatter_dimension = " + IntAttr(inst.dimensions.at(0)));
        }
        CollectiveAttrs(a, attrs);
        TPUEMU_RETURN_IF_ERROR(region(inst.called.at(0)));
        split = true;
        break;
      case Opcode::kAllGather:
        name = "stablehlo.all_gather";
        attrs.push_back("all_gather_dim = " + IntAttr(inst.dimensions.at(0)));
        CollectiveAttrs(a, attrs);
        split = true;
        break;
      case Opcode::kAllToAll: {
        if (!inst.has_dimensions || inst.dimensions.empty()) {
          return refuse("a tuple all-to-all (no split dimension) is not printed");
        }
        name = "stablehlo.all_to_all";
        const int64_t d = inst.dimensions[0];
        const int64_t count = a.replica_groups.empty()
                                  ? module_.devices()
                                  : static_cast<int64_t>(a.replica_groups[0].size());
        attrs = {"split_dimension = " + IntAttr(d), "concat_dimension = " + IntAttr(d),
                 "split_count = " + IntAttr(count)};
        CollectiveAttrs(a, attrs);
        break;
      }
      case Opcode::kCollectivePermute: {
        if (inst.operands.size() != 1) return refuse("an in-place collective-permute");
        name = "stablehlo.collective_permute";
        std::vector<std::vector<int64_t>> pairs;
        for (const auto& [s, t] : a.source_target_pairs) pairs.push_back({s, t});
        if (pairs.empty()) {
          attrs.push_back("source_target_pairs = dense<> : tensor<0x2xi64>");
        } else {
          attrs.push_back("source_target_pairs = " + I64Matrix(pairs));
        }
        if (a.channel_id) {
          attrs.push_back("channel_handle = #stablehlo.channel_handle<handle = " +
                          std::to_string(*a.channel_id) + ", type = 1>");
        }
        break;
      }
      case Opcode::kCollectiveBroadcast:
        name = "stablehlo.collective_broadcast";
        CollectiveAttrs(a, attrs);
        break;
      default:
        return refuse(std::string(hlo::OpcodeName(op)) +
                      " has no StableHLO form the front end reads back");
    }
  }
  const std::vector<Shape> results =
      split && inst.shape.IsTuple() ? inst.shape.tuple : std::vector<Shape>{inst.shape};
  Result<std::string> type = FunctionType(operand_types, results);
  if (!type.ok()) return type.status();
  const std::string lhs = DefineResults(body, i, split ? results.size() : static_cast<size_t>(-1));
  std::string text =
      (lhs.empty() ? "" : lhs + " = ") + "\"" + name + "\"(" + JoinText(operands) + ")";
  if (!attrs.empty()) text += " <{" + JoinText(attrs) + "}>";
  if (!regions.empty()) {
    const std::string close(static_cast<size_t>(body.indent), ' ');
    text += " ({\n" + JoinText(regions, (close + "}, {\n").c_str()) + close + "})";
  }
  Line(body, text + " : " + *type);
  return Status::Ok();
}

}  // namespace internal
}  // namespace tpuemu::engine::stablehlo
