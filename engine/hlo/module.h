// The in-memory form of an HLO module: computations of instructions with shapes and the
// attributes the evaluator and the cost model read. Built by the parser (parser.h) and checked
// by the verifier (verifier.h); after Verify succeeds every index an attribute holds is in range
// and every instruction's shape matches its operands, so consumers may rely on both.
//
// Operands refer to instructions of the same computation by position (XLA's text defines every
// operand before its use, so positions are a topological order); called computations refer to
// Module::computations by position. Ignored attributes (metadata except op_name/op_type,
// backend_config except known_trip_count, sharding, frontend_attributes, ...) are not kept.
// Immutable after parsing; safe to read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/hlo/array.h"
#include "engine/hlo/opcode.h"
#include "engine/hlo/shape.h"

namespace tpuemu::engine::hlo {

struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t pad_low = 0;
  int64_t pad_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool reversal = false;        // rhs_reversal

  // Output positions along this dimension for an input of `in` elements: the base-dilated,
  // padded input over the window-dilated span, at the stride (0 when the window does not fit).
  int64_t OutputSize(int64_t in) const;
};

// dim_labels=b01f_01io->b01f, as dimension numbers.
struct ConvDims {
  int64_t input_batch = 0;
  int64_t input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0;
  int64_t kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0;
  int64_t output_feature = 0;
  std::vector<int64_t> output_spatial;
};

struct DotDims {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
};

struct GatherDims {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;
};

struct ScatterDims {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
};

struct PadDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
};

enum class Direction { kEq, kNe, kLt, kLe, kGt, kGe };
// compare's type=: kDefault picks by element type; kTotalOrder orders floats totally
// (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN).
enum class CompareType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
// operand_precision / algorithm, as MXU bf16 passes: none given, 1, 3, 6, or plain f32.
enum class DotPrecision { kUnset, kDefault, kHigh, kHighest, kF32 };
enum class RngAlgorithm { kDefault, kThreeFry, kPhilox };

// Attributes most instructions do not have; allocated only for those that do.
struct Attributes {
  std::vector<int64_t> slice_start, slice_limit, slice_stride;  // slice
  std::vector<int64_t> dynamic_slice_sizes;
  std::vector<PadDim> padding;  // pad
  std::vector<WindowDim> window;
  bool has_window = false;
  ConvDims conv;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  DotDims dot;
  GatherDims gather;
  ScatterDims scatter;
  Direction direction = Direction::kEq;
  bool has_direction = false;
  CompareType compare_type = CompareType::kDefault;
  int64_t exponent_bits = 8;
  int64_t mantissa_bits = 23;
  std::vector<std::vector<int64_t>> replica_groups;
  bool use_global_device_ids = false;
  std::optional<int64_t> channel_id;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  bool is_stable = false;
  std::string fusion_kind;  // kLoop, kInput, kOutput, kCustom
  std::string custom_call_target;
  RngAlgorithm rng_algorithm = RngAlgorithm::kDefault;
  std::string distribution;  // rng: rng_uniform | rng_normal
  int64_t k = 0;             // topk
  bool largest = true;
  float epsilon = 0;  // batch-norm-*
  int64_t feature_index = 0;
  int64_t delta = 0;                    // rng-get-and-update-state
  std::optional<Opcode> async_wrapped;  // "reduce-scatter-start": async-start wrapping it
  std::string sparsity;  // dot: sparsity=L.1@2:4... (structured-sparse operands; not executable)
};

struct Instruction {
  std::string name;
  Opcode opcode = Opcode::kParameter;
  Shape shape;
  std::vector<int> operands;  // positions in the computation
  std::vector<int> called;    // positions in Module::computations (see below)
  int line = 0;               // 1-based position of the name in the text
  int column = 0;
  // Common attributes, inline.
  std::vector<int64_t> dimensions;  // dimensions={...} (broadcast, reduce, transpose, ...)
  bool has_dimensions = false;
  int64_t index = -1;  // get-tuple-element index, parameter number, iota dimension (-1: none)
  DotPrecision precision = DotPrecision::kUnset;  // dot, convolution
  int64_t known_trip_count = -1;                  // while: backend_config known_trip_count
  std::shared_ptr<const Value> literal;           // constant; null when elided ({...})
  std::string op_name;                            // metadata op_name
  std::string op_type;                            // metadata op_type
  std::unique_ptr<Attributes> attrs;

  // The rare attributes (an empty default when none were parsed).
  const Attributes& a() const;
  Attributes& mutable_attrs();
  // "%fusion.12 (fusion, line 40)": how errors name an instruction ("%dot.3 (dot)" for one a
  // builder made, which has no line: builder.h).
  std::string Describe() const;
  // A custom-call that only annotates its operand (custom_call_target Sharding, MoveToHost,
  // MoveToDevice, as JAX and XLA print them): evaluated as its operand and priced free.
  bool IsPassThroughCustomCall() const;
  // Why the evaluator cannot run this instruction whatever its element types ("custom-call
  // target \"foo\"", "opcode fft", "sparse dot (sparsity=...)"); empty when it can.
  std::string Unsupported() const;
};
// Meaning of Instruction::called by opcode: to_apply (reduce, reduce-window, scatter, sort, map,
// all-reduce, reduce-scatter, call), {condition, body} (while), branches in order (conditional;
// {true, false} for a pred index), calls (fusion, async-start), {select, scatter}
// (select-and-scatter), called_computations (custom-call).

struct Computation {
  std::string name;
  std::vector<Instruction> instructions;
  int root = -1;                // the ROOT, or the last instruction
  std::vector<int> parameters;  // parameter number -> instruction position
  bool is_entry = false;
  int line = 0;
};

struct Module {
  std::string name;
  std::vector<Computation> computations;
  int entry = -1;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  bool is_scheduled = false;
  bool has_fusions = false;  // an after-optimizations dump (it has fusion instructions)
  int64_t instruction_count = 0;

  const Computation& entry_computation() const { return computations[static_cast<size_t>(entry)]; }
  // The computation named `name`, or -1.
  int FindComputation(const std::string& name) const;
  // replica_count * num_partitions: the programs that run side by side.
  int64_t devices() const { return replica_count * num_partitions; }
};

}  // namespace tpuemu::engine::hlo
