// Collective ops (StableHLO spec: all_reduce, all_gather, reduce_scatter, all_to_all,
// collective_permute, collective_broadcast) to HLO's collectives over the module's devices.
#include "engine/stablehlo/lower_internal.h"

namespace tpuemu::engine::stablehlo::internal {

Result<std::vector<int>> Lowerer::LowerCollective(const Op& op, const std::vector<int>& operands) {
  const std::string name = op.name.substr(10);
  hlo::Instruction inst;
  inst.operands = operands;
  hlo::Attributes& a = inst.mutable_attrs();
  if (const Attr* g = op.Find("replica_groups")) {
    Result<std::vector<int64_t>> flat = Ints(*g);
    if (!flat.ok()) return Error(op, "replica_groups must be a dense integer matrix");
    const bool dense = g->kind == Attr::Kind::kDense && g->type.IsArray() && g->type.rank() == 2;
    const int64_t width = dense ? g->type.dims[1] : static_cast<int64_t>(flat->size());
    for (size_t k = 0; width > 0 && k < flat->size(); k += static_cast<size_t>(width)) {
      std::vector<int64_t> group;
      for (int64_t j = 0; j < width; ++j) {
        const int64_t id = (*flat)[k + static_cast<size_t>(j)];
        if (id >= 0) group.push_back(id);  // -1 pads ragged groups
      }
      a.replica_groups.push_back(std::move(group));
    }
  }
  if (const Attr* ch = op.Find("channel_handle")) {
    if (const Attr* h = ch->Field("handle"); h != nullptr && h->i > 0) a.channel_id = h->i;
  }
  a.use_global_device_ids = BoolOf(op, "use_global_device_ids");
  const size_t n = op.result_types.size();
  inst.shape = n == 1 ? op.result_types[0] : hlo::Shape::Tuple(op.result_types);
  if (name == "all_reduce" || name == "reduce_scatter") {
    if (op.regions.size() != 1) return Error(op, "needs a computation region");
    Result<int> fn = FlatRegion(op.regions[0], op, "computation");
    if (!fn.ok()) return fn.status();
    inst.called = {*fn};
    inst.opcode = name == "all_reduce" ? hlo::Opcode::kAllReduce : hlo::Opcode::kReduceScatter;
    if (name == "reduce_scatter") {
      inst.dimensions = {IntOf(op, "scatter_dimension", 0)};
      inst.has_dimensions = true;
    }
  } else if (name == "all_gather") {
    inst.opcode = hlo::Opcode::kAllGather;
    inst.dimensions = {IntOf(op, "all_gather_dim", 0)};
    inst.has_dimensions = true;
  } else if (name == "all_to_all") {
    const int64_t split = IntOf(op, "split_dimension", 0);
    if (split != IntOf(op, "concat_dimension", split)) {
      return Unsupported(op, "split_dimension != concat_dimension");
    }
    inst.opcode = hlo::Opcode::kAllToAll;
    inst.dimensions = {split};
    inst.has_dimensions = true;
  } else if (name == "collective_permute") {
    inst.opcode = hlo::Opcode::kCollectivePermute;
    Result<std::vector<int64_t>> pairs = IntsOf(op, "source_target_pairs");
    if (!pairs.ok()) return pairs.status();
    for (size_t k = 0; k + 1 < pairs->size(); k += 2) {
      a.source_target_pairs.emplace_back((*pairs)[k], (*pairs)[k + 1]);
    }
  } else {
    inst.opcode = hlo::Opcode::kCollectiveBroadcast;
  }
  Result<int> p = Emit(std::move(inst), op);
  if (!p.ok()) return p.status();
  return Unpack(*p, n, n != 1, op);
}

}  // namespace tpuemu::engine::stablehlo::internal
