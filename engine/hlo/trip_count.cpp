// Static trip counts of while loops: XLA's known_trip_count when the dump carries it, else the
// counted-loop pattern jax.lax.fori_loop and scan produce — condition `i < N` (any direction,
// either operand order) on a tuple element whose init is a constant and whose body adds a
// constant step.
#include <algorithm>

#include "engine/hlo/cost_model_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

const Instruction& At(const Computation& c, int i) {
  return c.instructions[static_cast<size_t>(i)];
}

// Follows copies/converts/bitcasts of a scalar.
const Instruction& Through(const Computation& c, int i) {
  const Instruction* inst = &At(c, i);
  while ((inst->opcode == Opcode::kCopy || inst->opcode == Opcode::kConvert ||
          inst->opcode == Opcode::kBitcast || inst->opcode == Opcode::kReshape) &&
         !inst->operands.empty()) {
    inst = &At(c, inst->operands[0]);
  }
  return *inst;
}

// The tuple index when instruction i is get-tuple-element(parameter(0), index); else -1.
int64_t TupleIndexOfParameter(const Computation& c, int i) {
  const Instruction& inst = Through(c, i);
  if (inst.opcode != Opcode::kGetTupleElement) return -1;
  const Instruction& tuple = At(c, inst.operands[0]);
  return tuple.opcode == Opcode::kParameter && tuple.index == 0 ? inst.index : -1;
}

bool ConstantInt(const Computation& c, int i, int64_t& value) {
  const Instruction& inst = Through(c, i);
  if (inst.opcode != Opcode::kConstant || !inst.literal || inst.literal->is_tuple) return false;
  const Array& a = *inst.literal->array;
  if (a.size() != 1) return false;
  const double v = a.GetDouble(0);
  if (v != static_cast<double>(static_cast<int64_t>(v))) return false;
  value = static_cast<int64_t>(v);
  return true;
}

Direction Swap(Direction d) {
  switch (d) {
    case Direction::kLt:
      return Direction::kGt;
    case Direction::kLe:
      return Direction::kGe;
    case Direction::kGt:
      return Direction::kLt;
    case Direction::kGe:
      return Direction::kLe;
    default:
      return d;
  }
}

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

int64_t TripCount(const Module& module, const Computation& caller, const Instruction& loop) {
  if (loop.known_trip_count >= 0) return loop.known_trip_count;
  const Computation& cond = module.computations[static_cast<size_t>(loop.called[0])];
  const Computation& body = module.computations[static_cast<size_t>(loop.called[1])];
  const Instruction& test = At(cond, cond.root);
  if (test.opcode != Opcode::kCompare) return -1;
  Direction dir = test.a().direction;
  int64_t k = TupleIndexOfParameter(cond, test.operands[0]);
  int64_t bound = 0;
  if (k >= 0 && ConstantInt(cond, test.operands[1], bound)) {
    // i <dir> bound
  } else if ((k = TupleIndexOfParameter(cond, test.operands[1])) >= 0 &&
             ConstantInt(cond, test.operands[0], bound)) {
    dir = Swap(dir);
  } else {
    return -1;
  }
  const Instruction& next = At(body, body.root);
  if (next.opcode != Opcode::kTuple || k >= static_cast<int64_t>(next.operands.size())) return -1;
  const Instruction& update = Through(body, next.operands[static_cast<size_t>(k)]);
  if (update.opcode != Opcode::kAdd && update.opcode != Opcode::kSubtract) return -1;
  int64_t step = 0;
  if (TupleIndexOfParameter(body, update.operands[0]) == k &&
      ConstantInt(body, update.operands[1], step)) {
    if (update.opcode == Opcode::kSubtract) step = -step;
  } else if (update.opcode == Opcode::kAdd &&
             TupleIndexOfParameter(body, update.operands[1]) == k &&
             ConstantInt(body, update.operands[0], step)) {
  } else {
    return -1;
  }
  const Instruction& init = At(caller, loop.operands[0]);
  int64_t start = 0;
  if (init.opcode != Opcode::kTuple || k >= static_cast<int64_t>(init.operands.size()) ||
      !ConstantInt(caller, init.operands[static_cast<size_t>(k)], start) || step == 0) {
    return -1;
  }
  const int64_t span = bound - start;
  int64_t trips = -1;
  switch (dir) {
    case Direction::kLt:
      trips =
          step > 0 ? std::max<int64_t>(0, FloorDiv(span + step - 1, step)) : (span > 0 ? -1 : 0);
      break;
    case Direction::kLe:
      trips = step > 0 ? std::max<int64_t>(0, FloorDiv(span, step) + 1) : (span >= 0 ? -1 : 0);
      break;
    case Direction::kGt:
      trips =
          step < 0 ? std::max<int64_t>(0, FloorDiv(-span - step - 1, -step)) : (span < 0 ? -1 : 0);
      break;
    case Direction::kGe:
      trips = step < 0 ? std::max<int64_t>(0, FloorDiv(-span, -step) + 1) : (span <= 0 ? -1 : 0);
      break;
    case Direction::kNe:
      trips = span % step == 0 && span / step >= 0 ? span / step : -1;
      break;
    case Direction::kEq:
      trips = span == 0 ? 1 : 0;
      break;
  }
  return trips < 0 ? -1 : trips;
}

}  // namespace tpuemu::engine::hlo::internal
