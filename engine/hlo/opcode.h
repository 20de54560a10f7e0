// HLO opcodes: every opcode XLA's text format can name (so any dump parses), with the text
// spelling, and the classification the verifier, evaluator and cost model share.
// Pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace tpuemu::engine::hlo {

// (enum, text name). The names are XLA's (xla/hlo/ir/hlo_opcode.h).
#define TPUEMU_HLO_OPCODES(V)                            \
  V(kAbs, "abs")                                         \
  V(kAcos, "acos")                                       \
  V(kAcosh, "acosh")                                     \
  V(kAdd, "add")                                         \
  V(kAddDependency, "add-dependency")                    \
  V(kAfterAll, "after-all")                              \
  V(kAllGather, "all-gather")                            \
  V(kAllGatherDone, "all-gather-done")                   \
  V(kAllGatherStart, "all-gather-start")                 \
  V(kAllReduce, "all-reduce")                            \
  V(kAllReduceDone, "all-reduce-done")                   \
  V(kAllReduceStart, "all-reduce-start")                 \
  V(kAllToAll, "all-to-all")                             \
  V(kAnd, "and")                                         \
  V(kAsin, "asin")                                       \
  V(kAsinh, "asinh")                                     \
  V(kAsyncDone, "async-done")                            \
  V(kAsyncStart, "async-start")                          \
  V(kAsyncUpdate, "async-update")                        \
  V(kAtan, "atan")                                       \
  V(kAtan2, "atan2")                                     \
  V(kAtanh, "atanh")                                     \
  V(kBatchNormGrad, "batch-norm-grad")                   \
  V(kBatchNormInference, "batch-norm-inference")         \
  V(kBatchNormTraining, "batch-norm-training")           \
  V(kBitcast, "bitcast")                                 \
  V(kBitcastConvert, "bitcast-convert")                  \
  V(kBroadcast, "broadcast")                             \
  V(kCall, "call")                                       \
  V(kCbrt, "cbrt")                                       \
  V(kCeil, "ceil")                                       \
  V(kCholesky, "cholesky")                               \
  V(kClamp, "clamp")                                     \
  V(kClz, "count-leading-zeros")                         \
  V(kCollectiveBroadcast, "collective-broadcast")        \
  V(kCollectivePermute, "collective-permute")            \
  V(kCollectivePermuteDone, "collective-permute-done")   \
  V(kCollectivePermuteStart, "collective-permute-start") \
  V(kCollectiveReduce, "collective-reduce")              \
  V(kCompare, "compare")                                 \
  V(kComplex, "complex")                                 \
  V(kConcatenate, "concatenate")                         \
  V(kConditional, "conditional")                         \
  V(kConstant, "constant")                               \
  V(kConvert, "convert")                                 \
  V(kConvolution, "convolution")                         \
  V(kCopy, "copy")                                       \
  V(kCopyDone, "copy-done")                              \
  V(kCopyStart, "copy-start")                            \
  V(kCos, "cosine")                                      \
  V(kCosh, "cosh")                                       \
  V(kCustomCall, "custom-call")                          \
  V(kDivide, "divide")                                   \
  V(kDomain, "domain")                                   \
  V(kDot, "dot")                                         \
  V(kDynamicReshape, "dynamic-reshape")                  \
  V(kDynamicSlice, "dynamic-slice")                      \
  V(kDynamicUpdateSlice, "dynamic-update-slice")         \
  V(kErf, "erf")                                         \
  V(kExp, "exponential")                                 \
  V(kExpm1, "exponential-minus-one")                     \
  V(kFft, "fft")                                         \
  V(kFloor, "floor")                                     \
  V(kFusion, "fusion")                                   \
  V(kGather, "gather")                                   \
  V(kGetDimensionSize, "get-dimension-size")             \
  V(kGetTupleElement, "get-tuple-element")               \
  V(kImag, "imag")                                       \
  V(kInfeed, "infeed")                                   \
  V(kIota, "iota")                                       \
  V(kIsFinite, "is-finite")                              \
  V(kLog, "log")                                         \
  V(kLog1p, "log-plus-one")                              \
  V(kLogistic, "logistic")                               \
  V(kMap, "map")                                         \
  V(kMaximum, "maximum")                                 \
  V(kMinimum, "minimum")                                 \
  V(kMulhi, "mulhi")                                     \
  V(kMultiply, "multiply")                               \
  V(kNegate, "negate")                                   \
  V(kNot, "not")                                         \
  V(kOptimizationBarrier, "opt-barrier")                 \
  V(kOr, "or")                                           \
  V(kOutfeed, "outfeed")                                 \
  V(kPad, "pad")                                         \
  V(kParameter, "parameter")                             \
  V(kPartitionId, "partition-id")                        \
  V(kPopulationCount, "popcnt")                          \
  V(kPower, "power")                                     \
  V(kRaggedAllToAll, "ragged-all-to-all")                \
  V(kRaggedDot, "ragged-dot")                            \
  V(kReal, "real")                                       \
  V(kRecv, "recv")                                       \
  V(kRecvDone, "recv-done")                              \
  V(kReduce, "reduce")                                   \
  V(kReducePrecision, "reduce-precision")                \
  V(kReduceScatter, "reduce-scatter")                    \
  V(kReduceWindow, "reduce-window")                      \
  V(kRemainder, "remainder")                             \
  V(kReplicaId, "replica-id")                            \
  V(kReshape, "reshape")                                 \
  V(kReverse, "reverse")                                 \
  V(kRng, "rng")                                         \
  V(kRngBitGenerator, "rng-bit-generator")               \
  V(kRngGetAndUpdateState, "rng-get-and-update-state")   \
  V(kRoundNearestAfz, "round-nearest-afz")               \
  V(kRoundNearestEven, "round-nearest-even")             \
  V(kRsqrt, "rsqrt")                                     \
  V(kScaledDot, "scaled-dot")                            \
  V(kScan, "scan")                                       \
  V(kScatter, "scatter")                                 \
  V(kSelect, "select")                                   \
  V(kSelectAndScatter, "select-and-scatter")             \
  V(kSend, "send")                                       \
  V(kSendDone, "send-done")                              \
  V(kSetDimensionSize, "set-dimension-size")             \
  V(kShiftLeft, "shift-left")                            \
  V(kShiftRightArithmetic, "shift-right-arithmetic")     \
  V(kShiftRightLogical, "shift-right-logical")           \
  V(kShuffle, "shuffle")                                 \
  V(kSign, "sign")                                       \
  V(kSin, "sine")                                        \
  V(kSinh, "sinh")                                       \
  V(kSlice, "slice")                                     \
  V(kSort, "sort")                                       \
  V(kSqrt, "sqrt")                                       \
  V(kStochasticConvert, "stochastic-convert")            \
  V(kSubtract, "subtract")                               \
  V(kTan, "tan")                                         \
  V(kTanh, "tanh")                                       \
  V(kTopK, "topk")                                       \
  V(kTranspose, "transpose")                             \
  V(kTriangularSolve, "triangular-solve")                \
  V(kTuple, "tuple")                                     \
  V(kWhile, "while")                                     \
  V(kXor, "xor")

enum class Opcode {
#define TPUEMU_HLO_OPCODE_ENUM(e, name) e,
  TPUEMU_HLO_OPCODES(TPUEMU_HLO_OPCODE_ENUM)
#undef TPUEMU_HLO_OPCODE_ENUM
};

std::string_view OpcodeName(Opcode opcode);
// The opcode spelled exactly `name`; nullopt for anything else.
std::optional<Opcode> ParseOpcode(std::string_view name);

// Elementwise maps of one operand (abs, exp, not, ...; not convert/bitcast-convert).
bool IsElementwiseUnary(Opcode opcode);
// Elementwise maps of two operands (add, compare, power, shifts, ...).
bool IsElementwiseBinary(Opcode opcode);
// exp, log, tanh, erf, logistic, trig...: the VPU's polynomial evaluations.
bool IsTranscendental(Opcode opcode);
// all-reduce, all-gather, reduce-scatter, collective-permute, all-to-all, collective-broadcast
// and their -start forms: the instructions that move data between cores.
bool IsCollective(Opcode opcode);
// The evaluator implements this opcode (custom-call, fft, send/recv, ... are not).
bool IsEvaluatorSupported(Opcode opcode);

}  // namespace tpuemu::engine::hlo
