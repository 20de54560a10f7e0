// StableHLO ops to HLO instructions (the StableHLO specification's op, XLA's HLO opcode of the
// same semantics; docs/stablehlo.md lists them).
#include <map>

#include "engine/stablehlo/lower_internal.h"
#include "engine/stablehlo/op_table.h"

namespace tpuemu::engine::stablehlo::internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

Result<hlo::Direction> DirectionOf(const std::string& d) {
  if (d == "EQ") return hlo::Direction::kEq;
  if (d == "NE") return hlo::Direction::kNe;
  if (d == "LT") return hlo::Direction::kLt;
  if (d == "LE") return hlo::Direction::kLe;
  if (d == "GT") return hlo::Direction::kGt;
  if (d == "GE") return hlo::Direction::kGe;
  return Status::InvalidArgument("unknown comparison_direction '" + d + "'");
}

}  // namespace

Result<std::vector<int>> Lowerer::LowerStablehlo(const Op& op, const std::vector<int>& operands,
                                                 Scope& scope) {
  (void)scope;
  const std::string name = op.name.substr(10);
  const Shape result = op.result_types.empty() ? Shape() : op.result_types[0];
  auto one = [&](Instruction inst) -> Result<std::vector<int>> {
    Result<int> p = Emit(std::move(inst), op);
    if (!p.ok()) return p.status();
    return std::vector<int>{*p};
  };
  auto many = [&](Instruction inst) -> Result<std::vector<int>> {
    const size_t n = op.result_types.size();
    inst.shape = n == 1 ? op.result_types[0] : Shape::Tuple(op.result_types);
    Result<int> p = Emit(std::move(inst), op);
    if (!p.ok()) return p.status();
    return Unpack(*p, n, n != 1, op);
  };
  auto ints = [&](std::string_view attr, bool required = true) {
    return IntsOf(op, attr, required);
  };
  if (std::optional<Opcode> simple = SimpleOpcode(name)) {
    return one(Make(*simple, operands, result));
  }
  if (name == "constant") {
    const Attr* v = op.Find("value");
    if (v == nullptr || v->kind != Attr::Kind::kDense) return Error(op, "needs a dense value");
    Result<std::shared_ptr<const hlo::Value>> value = DenseValue(*v->dense, result);
    if (!value.ok()) return Error(op, value.status().message());
    Instruction inst = Make(Opcode::kConstant, {}, result);
    inst.literal = std::move(*value);
    return one(std::move(inst));
  }
  if (name == "compare") {
    Instruction inst = Make(Opcode::kCompare, operands, result);
    Result<hlo::Direction> d = DirectionOf(WordOf(op, "comparison_direction"));
    if (!d.ok()) return Error(op, d.status().message());
    hlo::Attributes& a = inst.mutable_attrs();
    a.direction = *d;
    a.has_direction = true;
    const std::string type = WordOf(op, "compare_type");
    if (type == "FLOAT") a.compare_type = hlo::CompareType::kFloat;
    if (type == "TOTALORDER") a.compare_type = hlo::CompareType::kTotalOrder;
    if (type == "SIGNED") a.compare_type = hlo::CompareType::kSigned;
    if (type == "UNSIGNED") a.compare_type = hlo::CompareType::kUnsigned;
    return one(std::move(inst));
  }
  if (name == "broadcast_in_dim" || name == "transpose" || name == "reverse") {
    const char* attr = name == "broadcast_in_dim" ? "broadcast_dimensions"
                       : name == "transpose"      ? "permutation"
                                                  : "dimensions";
    Result<std::vector<int64_t>> dims = ints(attr);
    if (!dims.ok()) return dims.status();
    if (name == "broadcast_in_dim" && operands.size() == 1) {
      // StableHLO lets a size-1 dimension stretch; HLO's broadcast does not: reshape it away
      // first, as XLA's converter does.
      const Shape& in = ShapeOf(operands[0]);
      std::vector<int64_t> kept_dims, kept_sizes;
      for (int k = 0; k < in.rank() && static_cast<size_t>(k) < dims->size(); ++k) {
        const int64_t to = (*dims)[static_cast<size_t>(k)];
        const bool stretch = in.dims[static_cast<size_t>(k)] == 1 && to >= 0 &&
                             to < result.rank() && result.dims[static_cast<size_t>(to)] != 1;
        if (!stretch) {
          kept_dims.push_back(to);
          kept_sizes.push_back(in.dims[static_cast<size_t>(k)]);
        }
      }
      if (kept_dims.size() != dims->size()) {
        Result<int> r =
            Emit(Make(Opcode::kReshape, operands, Shape::Array(in.type, kept_sizes)), op);
        if (!r.ok()) return r.status();
        Instruction inst = Make(Opcode::kBroadcast, {*r}, result);
        inst.dimensions = std::move(kept_dims);
        inst.has_dimensions = true;
        return one(std::move(inst));
      }
    }
    Opcode opcode = name == "broadcast_in_dim" ? Opcode::kBroadcast
                    : name == "transpose"      ? Opcode::kTranspose
                                               : Opcode::kReverse;
    Instruction inst = Make(opcode, operands, result);
    inst.dimensions = std::move(*dims);
    inst.has_dimensions = true;
    return one(std::move(inst));
  }
  if (name == "broadcast") {
    if (operands.size() != 1) return Error(op, "takes one operand");
    Result<std::vector<int64_t>> sizes = ints("broadcast_sizes");
    if (!sizes.ok()) return sizes.status();
    Instruction inst = Make(Opcode::kBroadcast, operands, result);
    for (int k = 0; k < ShapeOf(operands[0]).rank(); ++k) {
      inst.dimensions.push_back(static_cast<int64_t>(sizes->size()) + k);
    }
    inst.has_dimensions = true;
    return one(std::move(inst));
  }
  if (name == "concatenate") {
    Instruction inst = Make(Opcode::kConcatenate, operands, result);
    inst.dimensions = {IntOf(op, "dimension", 0)};
    inst.has_dimensions = true;
    return one(std::move(inst));
  }
  if (name == "iota") {
    Instruction inst = Make(Opcode::kIota, {}, result);
    inst.index = IntOf(op, "iota_dimension", 0);
    return one(std::move(inst));
  }
  if (name == "slice") {
    Instruction inst = Make(Opcode::kSlice, operands, result);
    hlo::Attributes& a = inst.mutable_attrs();
    Result<std::vector<int64_t>> start = ints("start_indices"), limit = ints("limit_indices");
    if (!start.ok()) return start.status();
    if (!limit.ok()) return limit.status();
    Result<std::vector<int64_t>> strides = SizedInts(op, "strides", start->size(), 1);
    if (!strides.ok()) return Error(op, strides.status().message());
    a.slice_start = *start;
    a.slice_limit = *limit;
    a.slice_stride = *strides;
    return one(std::move(inst));
  }
  if (name == "dynamic_slice") {
    Result<std::vector<int64_t>> sizes = ints("slice_sizes");
    if (!sizes.ok()) return sizes.status();
    Instruction inst = Make(Opcode::kDynamicSlice, operands, result);
    inst.mutable_attrs().dynamic_slice_sizes = *sizes;
    return one(std::move(inst));
  }
  if (name == "dynamic_update_slice")
    return one(Make(Opcode::kDynamicUpdateSlice, operands, result));
  if (name == "pad") {
    Result<std::vector<int64_t>> low = ints("edge_padding_low"), high = ints("edge_padding_high");
    if (!low.ok()) return low.status();
    if (!high.ok()) return high.status();
    Result<std::vector<int64_t>> interior = SizedInts(op, "interior_padding", low->size(), 0);
    if (!interior.ok()) return Error(op, interior.status().message());
    if (high->size() != low->size()) return Error(op, "low and high padding differ in length");
    Instruction inst = Make(Opcode::kPad, operands, result);
    for (size_t k = 0; k < low->size(); ++k) {
      inst.mutable_attrs().padding.push_back({(*low)[k], (*high)[k], (*interior)[k]});
    }
    return one(std::move(inst));
  }
  if (name == "dot_general" || name == "dot") {
    if (operands.size() != 2) return Error(op, "takes two operands");
    Instruction inst = Make(Opcode::kDot, operands, result);
    hlo::DotDims& d = inst.mutable_attrs().dot;
    if (name == "dot") {
      d.lhs_contracting = {ShapeOf(operands[0]).rank() - 1};
      d.rhs_contracting = {0};
    } else if (const Attr* dn = op.Find("dot_dimension_numbers")) {
      auto field = [&](const char* f, std::vector<int64_t>& out) -> Status {
        if (const Attr* v = dn->Field(f)) {
          Result<std::vector<int64_t>> x = Ints(*v);
          if (!x.ok()) return Error(op, std::string(f) + " must be integers");
          out = *x;
        }
        return Status::Ok();
      };
      TPUEMU_RETURN_IF_ERROR(field("lhs_batching_dimensions", d.lhs_batch));
      TPUEMU_RETURN_IF_ERROR(field("rhs_batching_dimensions", d.rhs_batch));
      TPUEMU_RETURN_IF_ERROR(field("lhs_contracting_dimensions", d.lhs_contracting));
      TPUEMU_RETURN_IF_ERROR(field("rhs_contracting_dimensions", d.rhs_contracting));
    } else {
      for (auto [attr, out] : {std::pair{"lhs_batching_dimensions", &d.lhs_batch},
                               std::pair{"rhs_batching_dimensions", &d.rhs_batch},
                               std::pair{"lhs_contracting_dimensions", &d.lhs_contracting},
                               std::pair{"rhs_contracting_dimensions", &d.rhs_contracting}}) {
        Result<std::vector<int64_t>> v = ints(attr, false);
        if (!v.ok()) return v.status();
        *out = *v;
      }
    }
    inst.precision = PrecisionOf(op);
    return one(std::move(inst));
  }
  if (name == "reduce") {
    if (op.regions.size() != 1) return Error(op, "needs a body region");
    Result<int> body = FlatRegion(op.regions[0], op, "reducer");
    if (!body.ok()) return body.status();
    Instruction inst = Make(Opcode::kReduce, operands, {});
    Result<std::vector<int64_t>> dims = ints("dimensions");
    if (!dims.ok()) return dims.status();
    inst.dimensions = *dims;
    inst.has_dimensions = true;
    inst.called = {*body};
    return many(std::move(inst));
  }
  if (name == "sort") {
    if (op.regions.size() != 1) return Error(op, "needs a comparator region");
    Result<int> cmp = FlatRegion(op.regions[0], op, "comparator");
    if (!cmp.ok()) return cmp.status();
    Instruction inst = Make(Opcode::kSort, operands, {});
    int64_t dim = IntOf(op, "dimension", -1);
    if (dim < 0 && !operands.empty()) dim += ShapeOf(operands[0]).rank();
    inst.dimensions = {dim};
    inst.has_dimensions = true;
    inst.mutable_attrs().is_stable = BoolOf(op, "is_stable");
    inst.called = {*cmp};
    return many(std::move(inst));
  }
  if (name == "map") {
    if (op.regions.size() != 1) return Error(op, "needs a computation region");
    Result<int> fn = FlatRegion(op.regions[0], op, "computation");
    if (!fn.ok()) return fn.status();
    Instruction inst = Make(Opcode::kMap, operands, result);
    Result<std::vector<int64_t>> dims = ints("dimensions", false);
    if (!dims.ok()) return dims.status();
    inst.dimensions = *dims;
    inst.has_dimensions = true;
    inst.called = {*fn};
    return one(std::move(inst));
  }
  if (name == "gather") {
    const Attr* dn = op.Find("dimension_numbers");
    if (dn == nullptr) return Error(op, "needs dimension_numbers");
    Instruction inst = Make(Opcode::kGather, operands, result);
    hlo::GatherDims& g = inst.mutable_attrs().gather;
    for (auto [f, out] : {std::pair{"offset_dims", &g.offset_dims},
                          std::pair{"collapsed_slice_dims", &g.collapsed_slice_dims},
                          std::pair{"operand_batching_dims", &g.operand_batching_dims},
                          std::pair{"start_indices_batching_dims", &g.start_indices_batching_dims},
                          std::pair{"start_index_map", &g.start_index_map}}) {
      if (const Attr* v = dn->Field(f)) {
        Result<std::vector<int64_t>> x = Ints(*v);
        if (!x.ok()) return Error(op, std::string(f) + " must be integers");
        *out = *x;
      }
    }
    if (const Attr* v = dn->Field("index_vector_dim")) g.index_vector_dim = v->i;
    Result<std::vector<int64_t>> sizes = ints("slice_sizes");
    if (!sizes.ok()) return sizes.status();
    g.slice_sizes = *sizes;
    return one(std::move(inst));
  }
  if (name == "scatter") {
    const Attr* dn = op.Find("scatter_dimension_numbers");
    if (dn == nullptr || op.regions.size() != 1)
      return Error(op, "needs scatter_dimension_numbers and a region");
    Result<int> fn = FlatRegion(op.regions[0], op, "update_computation");
    if (!fn.ok()) return fn.status();
    Instruction inst = Make(Opcode::kScatter, operands, {});
    hlo::ScatterDims& s = inst.mutable_attrs().scatter;
    for (auto [f, out] :
         {std::pair{"update_window_dims", &s.update_window_dims},
          std::pair{"inserted_window_dims", &s.inserted_window_dims},
          std::pair{"input_batching_dims", &s.input_batching_dims},
          std::pair{"scatter_indices_batching_dims", &s.scatter_indices_batching_dims},
          std::pair{"scatter_dims_to_operand_dims", &s.scatter_dims_to_operand_dims}}) {
      if (const Attr* v = dn->Field(f)) {
        Result<std::vector<int64_t>> x = Ints(*v);
        if (!x.ok()) return Error(op, std::string(f) + " must be integers");
        *out = *x;
      }
    }
    if (const Attr* v = dn->Field("index_vector_dim")) s.index_vector_dim = v->i;
    inst.called = {*fn};
    return many(std::move(inst));
  }
  if (name == "convolution" || name == "reduce_window" || name == "select_and_scatter") {
    return LowerWindowed(op, operands);
  }
  if (name == "get_tuple_element") {
    Instruction inst = Make(Opcode::kGetTupleElement, operands, result);
    inst.index = IntOf(op, "index", 0);
    return one(std::move(inst));
  }
  if (name == "tuple") return one(Make(Opcode::kTuple, operands, result));
  if (name == "optimization_barrier") {
    if (operands.empty()) return std::vector<int>{};
    Result<int> t = Pack(operands, op);
    if (!t.ok()) return t.status();
    Instruction inst = Make(Opcode::kOptimizationBarrier, {*t}, ShapeOf(*t));
    Result<int> p = Emit(std::move(inst), op);
    if (!p.ok()) return p.status();
    return Unpack(*p, operands.size(), operands.size() != 1, op);
  }
  if (name == "custom_call") {
    const std::string target = WordOf(op, "call_target_name");
    Instruction inst = Make(Opcode::kCustomCall, operands, {});
    inst.mutable_attrs().custom_call_target = target;
    return many(std::move(inst));
  }
  if (name == "rng_bit_generator") {
    Instruction inst = Make(Opcode::kRngBitGenerator, operands, {});
    const std::string alg = WordOf(op, "rng_algorithm");
    if (alg == "THREE_FRY") inst.mutable_attrs().rng_algorithm = hlo::RngAlgorithm::kThreeFry;
    if (alg == "PHILOX") inst.mutable_attrs().rng_algorithm = hlo::RngAlgorithm::kPhilox;
    return many(std::move(inst));
  }
  if (name == "rng") {
    if (operands.size() != 3) return Error(op, "takes a, b and shape");
    Instruction inst = Make(Opcode::kRng, {operands[0], operands[1]}, result);
    inst.mutable_attrs().distribution =
        WordOf(op, "rng_distribution") == "NORMAL" ? "rng_normal" : "rng_uniform";
    return one(std::move(inst));
  }
  if (name == "reduce_precision") {
    Instruction inst = Make(Opcode::kReducePrecision, operands, result);
    inst.mutable_attrs().exponent_bits = IntOf(op, "exponent_bits", 8);
    inst.mutable_attrs().mantissa_bits = IntOf(op, "mantissa_bits", 23);
    return one(std::move(inst));
  }
  if (name == "get_dimension_size") {
    Instruction inst = Make(Opcode::kGetDimensionSize, operands, result);
    inst.dimensions = {IntOf(op, "dimension", 0)};
    inst.has_dimensions = true;
    return one(std::move(inst));
  }
  if (name == "partition_id" || name == "replica_id") {
    return one(
        Make(name == "partition_id" ? Opcode::kPartitionId : Opcode::kReplicaId, {}, result));
  }
  if (name == "after_all" || name == "create_token")
    return one(Make(Opcode::kAfterAll, operands, result));
  if (name == "batch_norm_inference" || name == "batch_norm_training" ||
      name == "batch_norm_grad") {
    const Opcode opcode = name == "batch_norm_inference"  ? Opcode::kBatchNormInference
                          : name == "batch_norm_training" ? Opcode::kBatchNormTraining
                                                          : Opcode::kBatchNormGrad;
    Instruction inst = Make(opcode, operands, {});
    const Attr* eps = op.Find("epsilon");
    inst.mutable_attrs().epsilon = eps == nullptr ? 0.f : static_cast<float>(eps->f);
    inst.mutable_attrs().feature_index = IntOf(op, "feature_index", 0);
    return many(std::move(inst));
  }
  if (IsCollectiveOp(name)) return LowerCollective(op, operands);
  return Unsupported(op, RefusalReason(name));
}

}  // namespace tpuemu::engine::stablehlo::internal
