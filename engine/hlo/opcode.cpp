#include "engine/hlo/opcode.h"

#include <algorithm>
#include <array>
#include <utility>

namespace tpuemu::engine::hlo {
namespace {

struct Entry {
  Opcode opcode;
  std::string_view name;
};

constexpr Entry kEntries[] = {
#define TPUEMU_HLO_OPCODE_ENTRY(e, name) {Opcode::e, name},
    TPUEMU_HLO_OPCODES(TPUEMU_HLO_OPCODE_ENTRY)
#undef TPUEMU_HLO_OPCODE_ENTRY
};

// The list is in enum order, so an opcode indexes its own entry.
constexpr size_t kCount = sizeof(kEntries) / sizeof(kEntries[0]);

// Sorted by name once, for binary-search lookups while parsing.
const std::array<Entry, kCount>& ByName() {
  static const std::array<Entry, kCount> sorted = [] {
    std::array<Entry, kCount> s;
    std::copy(std::begin(kEntries), std::end(kEntries), s.begin());
    std::sort(s.begin(), s.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return s;
  }();
  return sorted;
}

}  // namespace

std::string_view OpcodeName(Opcode opcode) {
  const auto i = static_cast<size_t>(opcode);
  return i < kCount ? kEntries[i].name : "unknown";
}

std::optional<Opcode> ParseOpcode(std::string_view name) {
  const auto& sorted = ByName();
  auto it = std::lower_bound(sorted.begin(), sorted.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  if (it == sorted.end() || it->name != name) return std::nullopt;
  return it->opcode;
}

bool IsElementwiseUnary(Opcode op) {
  switch (op) {
    case Opcode::kAbs:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAtanh:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kClz:
    case Opcode::kCos:
    case Opcode::kCosh:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSinh:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kCompare:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsTranscendental(Opcode op) {
  switch (op) {
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAtan2:
    case Opcode::kAtanh:
    case Opcode::kCbrt:
    case Opcode::kCos:
    case Opcode::kCosh:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kPower:
    case Opcode::kSin:
    case Opcode::kSinh:
    case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsCollective(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

bool IsEvaluatorSupported(Opcode op) {
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op) || IsCollective(op)) return true;
  switch (op) {
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kAsyncDone:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kBitcast:
    case Opcode::kBitcastConvert:
    case Opcode::kBroadcast:
    case Opcode::kCall:
    case Opcode::kClamp:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kConcatenate:
    case Opcode::kConditional:
    case Opcode::kConstant:
    case Opcode::kConvert:
    case Opcode::kConvolution:
    case Opcode::kCopy:
    case Opcode::kCopyDone:
    case Opcode::kCopyStart:
    case Opcode::kDomain:
    case Opcode::kDot:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kFusion:
    case Opcode::kGather:
    case Opcode::kGetDimensionSize:
    case Opcode::kGetTupleElement:
    case Opcode::kIota:
    case Opcode::kMap:
    case Opcode::kOptimizationBarrier:
    case Opcode::kPad:
    case Opcode::kParameter:
    case Opcode::kPartitionId:
    case Opcode::kReduce:
    case Opcode::kReducePrecision:
    case Opcode::kReduceWindow:
    case Opcode::kReplicaId:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kScatter:
    case Opcode::kSelect:
    case Opcode::kSelectAndScatter:
    case Opcode::kSlice:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kTranspose:
    case Opcode::kTuple:
    case Opcode::kWhile:
      return true;
    default:
      return false;
  }
}

}  // namespace tpuemu::engine::hlo
