// Collectives over the emulated devices with XLA's group modes (cross-replica,
// cross-partition, cross-replica-and-partition, flattened ids: GetCollectiveOpGroupMode in
// xla/service/collective_ops_utils.cc): all-reduce (folded over the group in group order),
// all-gather, reduce-scatter, all-to-all (array and tuple forms), collective-permute,
// collective-broadcast, and their -start forms.
#include <algorithm>
#include <map>

#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

enum class Mode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

Mode ModeOf(const Instruction& inst) {
  const Attributes& a = inst.a();
  if (!a.channel_id) return Mode::kCrossReplica;
  switch (inst.opcode) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
      return a.use_global_device_ids ? Mode::kFlattenedId : Mode::kCrossReplicaAndPartition;
    default:
      return Mode::kCrossPartition;
  }
}

struct Topology {
  int64_t replicas, partitions;
  int64_t devices() const { return replicas * partitions; }
};

// The ordered devices of `device`'s group.
Result<std::vector<int>> Group(const Instruction& inst, const Topology& t, int device) {
  const Mode mode = ModeOf(inst);
  const int64_t r = device / t.partitions, p = device % t.partitions;
  const int64_t id_space = mode == Mode::kCrossPartition ? t.partitions
                           : mode == Mode::kFlattenedId  ? t.devices()
                                                         : t.replicas;
  const int64_t mine = mode == Mode::kCrossPartition ? p : mode == Mode::kFlattenedId ? device : r;
  std::vector<int64_t> ids;
  const auto& groups = inst.a().replica_groups;
  if (groups.empty()) {
    for (int64_t i = 0; i < id_space; ++i) ids.push_back(i);
  } else {
    for (const auto& g : groups) {
      for (int64_t id : g) {
        if (id >= id_space) {
          return Status::InvalidArgument(inst.Describe() + ": replica group id " +
                                         std::to_string(id) + " does not exist (the module has " +
                                         std::to_string(t.replicas) + " replica(s) x " +
                                         std::to_string(t.partitions) + " partition(s))");
        }
      }
      if (std::find(g.begin(), g.end(), mine) != g.end()) ids = g;
    }
    if (ids.empty()) {
      return Status::InvalidArgument(inst.Describe() + ": device " + std::to_string(device) +
                                     " is in no replica group");
    }
  }
  std::vector<int> members;
  for (int64_t id : ids) {
    switch (mode) {
      case Mode::kCrossReplica:
        members.push_back(static_cast<int>(id * t.partitions + p));
        break;
      case Mode::kCrossPartition:
        members.push_back(static_cast<int>(r * t.partitions + id));
        break;
      case Mode::kCrossReplicaAndPartition:
        for (int64_t q = 0; q < t.partitions; ++q)
          members.push_back(static_cast<int>(id * t.partitions + q));
        break;
      case Mode::kFlattenedId:
        members.push_back(static_cast<int>(id));
        break;
    }
  }
  return members;
}

Value Rebuild(const Shape& shape, std::vector<Array>& leaves, size_t& next) {
  if (!shape.IsTuple()) return Value::Of(std::move(leaves[next++]));
  std::vector<Value> elements;
  for (const Shape& s : shape.tuple) elements.push_back(Rebuild(s, leaves, next));
  return Value::Tuple(std::move(elements));
}

Result<Array> Fold(KernelContext& ctx, const Instruction& inst,
                   const std::vector<const Array*>& xs) {
  Array acc = *xs[0];
  ScalarComputation& fn = ctx.Scalar(inst.called[0]);
  Scalar args[2], result[1];
  for (size_t m = 1; m < xs.size(); ++m) {
    const auto op = fn.simple_binary();
    if (op && acc.type == xs[m]->type) {
      acc = ApplyBinary(ElementwiseOp{*op, acc.type}, acc, *xs[m]);
      continue;
    }
    for (int64_t k = 0, n = acc.size(); k < n; ++k) {
      args[0] = GetScalar(acc, k);
      args[1] = GetScalar(*xs[m], k);
      TPUEMU_RETURN_IF_ERROR(fn.Apply(args, result));
      SetScalar(acc, k, result[0]);
    }
  }
  return acc;
}

std::vector<Array> Split(const Array& x, int64_t dim, int64_t parts) {
  std::vector<Array> chunks;
  const int64_t size = x.dims[static_cast<size_t>(dim)] / parts;
  std::vector<int64_t> start(x.dims.size(), 0), limit = x.dims, stride(x.dims.size(), 1);
  for (int64_t i = 0; i < parts; ++i) {
    start[static_cast<size_t>(dim)] = i * size;
    limit[static_cast<size_t>(dim)] = (i + 1) * size;
    chunks.push_back(Slice(x, start, limit, stride));
  }
  return chunks;
}

// The result of `inst` for the device at position `pos` of `members`; xs[m] holds member m's
// operand leaves.
Result<std::vector<Array>> ComputeGroup(KernelContext& ctx, const Instruction& inst, size_t pos,
                                        const std::vector<std::vector<const Array*>>& xs) {
  const size_t g = xs.size(), leaves = xs[0].size();
  if (inst.opcode == Opcode::kAllToAll && !inst.has_dimensions && leaves != g) {
    return Status::InvalidArgument(inst.Describe() +
                                   ": the tuple all-to-all needs one operand per "
                                   "group member (" +
                                   std::to_string(g) + "), found " + std::to_string(leaves));
  }
  std::vector<Array> out;
  for (size_t l = 0; l < leaves; ++l) {
    std::vector<const Array*> column;
    for (size_t m = 0; m < g; ++m) column.push_back(xs[m][l]);
    switch (inst.opcode) {
      case Opcode::kAllReduce:
      case Opcode::kAllReduceStart: {
        auto r = Fold(ctx, inst, column);
        if (!r.ok()) return r.status();
        out.push_back(std::move(*r));
        break;
      }
      case Opcode::kReduceScatter: {
        auto r = Fold(ctx, inst, column);
        if (!r.ok()) return r.status();
        out.push_back(std::move(Split(*r, inst.dimensions[0], static_cast<int64_t>(g))[pos]));
        break;
      }
      case Opcode::kAllGather:
      case Opcode::kAllGatherStart:
        out.push_back(Concatenate(column, inst.dimensions[0]));
        break;
      case Opcode::kAllToAll:
        if (inst.has_dimensions) {
          std::vector<Array> received;
          for (size_t m = 0; m < g; ++m) {
            received.push_back(
                std::move(Split(*column[m], inst.dimensions[0], static_cast<int64_t>(g))[pos]));
          }
          std::vector<const Array*> parts;
          for (const Array& a : received) parts.push_back(&a);
          out.push_back(Concatenate(parts, inst.dimensions[0]));
        } else {
          // tuple form: result element l is member l's operand `pos`
          out.push_back(*xs[l][pos]);
        }
        break;
      case Opcode::kCollectiveBroadcast:
        out.push_back(*column[0]);
        break;
      default:
        return Status::Unimplemented(inst.Describe() + ": collective not supported");
    }
  }
  return out;
}

// Gathers the group's operand leaves (member order) and computes `lane`'s result.
Result<std::vector<Array>> Compute(KernelContext& ctx, const Instruction& inst,
                                   const std::vector<int>& devices, const std::vector<int>& lane_of,
                                   const std::vector<int>& members,
                                   const std::vector<std::vector<const Value*>>& operands,
                                   size_t lane) {
  std::vector<std::vector<const Array*>> xs;
  size_t pos = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    const int dev = members[m];
    if (dev == devices[lane]) pos = m;
    if (dev >= static_cast<int>(lane_of.size()) || lane_of[static_cast<size_t>(dev)] < 0) {
      return Status::InvalidArgument(inst.Describe() + ": device " + std::to_string(dev) +
                                     " of the group did not reach this collective with device " +
                                     std::to_string(devices[lane]) +
                                     " (the devices took different paths)");
    }
    xs.emplace_back();
    for (const Value* v : operands[static_cast<size_t>(lane_of[static_cast<size_t>(dev)])]) {
      v->CollectArrays(xs.back());
    }
  }
  return ComputeGroup(ctx, inst, pos, xs);
}

}  // namespace

Value ZerosLike(const Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Value> elements;
    for (const Shape& s : shape.tuple) elements.push_back(ZerosLike(s));
    return Value::Tuple(std::move(elements));
  }
  if (!IsEvaluable(shape.type)) return Value::Tuple({});  // token[]
  return Value::Of(Array::Zeros(shape.type, shape.dims));
}

Result<std::vector<Value>> Collective(KernelContext& ctx, const Instruction& inst,
                                      const std::vector<int>& devices,
                                      const std::vector<std::vector<const Value*>>& operands) {
  const Topology t{ctx.module().replica_count, ctx.module().num_partitions};
  std::vector<int> lane_of(static_cast<size_t>(t.devices()), -1);
  for (size_t l = 0; l < devices.size(); ++l)
    lane_of[static_cast<size_t>(devices[l])] = static_cast<int>(l);
  const bool start_tuple =
      (inst.opcode == Opcode::kCollectivePermuteStart || inst.opcode == Opcode::kAllGatherStart) &&
      inst.shape.IsTuple() && inst.shape.tuple.size() >= 2;
  const Shape& result_shape = start_tuple ? inst.shape.tuple[1] : inst.shape;
  std::vector<Value> results(devices.size());
  // Every member of a group gets the same all-reduce/all-gather result: computed once per group.
  const bool shared = inst.opcode == Opcode::kAllReduce || inst.opcode == Opcode::kAllReduceStart ||
                      inst.opcode == Opcode::kAllGather || inst.opcode == Opcode::kAllGatherStart ||
                      inst.opcode == Opcode::kCollectiveBroadcast;
  std::map<int, std::vector<Array>> by_leader;
  for (size_t lane = 0; lane < devices.size(); ++lane) {
    std::vector<Array> leaves;
    if (inst.opcode == Opcode::kCollectivePermute ||
        inst.opcode == Opcode::kCollectivePermuteStart) {
      if (operands[lane].size() != 1) {
        return Status::Unimplemented(inst.Describe() + ": the in-place collective-permute form");
      }
      const Mode mode = ModeOf(inst);
      const int d = devices[lane];
      const int64_t r = d / t.partitions, p = d % t.partitions;
      const int64_t mine = mode == Mode::kCrossPartition ? p : r;
      std::vector<const Array*> src;
      for (const auto& [from, to] : inst.a().source_target_pairs) {
        if (to != mine) continue;
        const int64_t source =
            mode == Mode::kCrossPartition ? r * t.partitions + from : from * t.partitions + p;
        if (source >= t.devices() || lane_of[static_cast<size_t>(source)] < 0) {
          return Status::InvalidArgument(inst.Describe() + ": source device " +
                                         std::to_string(source) + " is not running it");
        }
        operands[static_cast<size_t>(lane_of[static_cast<size_t>(source)])][0]->CollectArrays(src);
        break;
      }
      const Value zeros = src.empty() ? ZerosLike(result_shape) : Value{};
      if (src.empty()) zeros.CollectArrays(src);
      for (const Array* a : src) leaves.push_back(*a);
    } else {
      auto members = Group(inst, t, devices[lane]);
      if (!members.ok()) return members.status();
      auto cached = shared ? by_leader.find((*members)[0]) : by_leader.end();
      if (cached != by_leader.end()) {
        leaves = cached->second;
      } else {
        auto computed = Compute(ctx, inst, devices, lane_of, *members, operands, lane);
        if (!computed.ok()) return computed.status();
        leaves = std::move(*computed);
        if (shared) by_leader[(*members)[0]] = leaves;
      }
    }
    for (size_t l = 0; l < leaves.size(); ++l) {
      std::vector<const Shape*> want;
      CollectLeaves(result_shape, want);
      if (l >= want.size() || leaves[l].dims != want[l]->dims) {
        return Status::InvalidArgument(inst.Describe() + ": over its replica group this gives " +
                                       leaves[l].shape().ToString() +
                                       ", but the result shape says " +
                                       (l < want.size() ? want[l]->ToString() : "nothing"));
      }
    }
    size_t next = 0;
    Value result = Rebuild(result_shape, leaves, next);
    if (start_tuple) {
      std::vector<Value> elements{*operands[lane][0], std::move(result)};
      for (size_t e = 2; e < inst.shape.tuple.size(); ++e)
        elements.push_back(ZerosLike(inst.shape.tuple[e]));
      result = Value::Tuple(std::move(elements));
    }
    results[lane] = std::move(result);
  }
  return results;
}

}  // namespace tpuemu::engine::hlo::internal
