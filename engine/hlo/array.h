// Runtime values of the HLO evaluator: dense arrays (Array) and tuple trees of them (Value).
//
// Storage is by kind, not by width: f16, bf16 and f32 arrays hold f32 values that are always
// representable in their type (every writer rounds with RoundToType); pred and every integer
// type hold int64 values canonicalised to their width (sign-extended for sNN, zero-extended for
// uNN, 0/1 for pred; u64 keeps its bit pattern). Arrays are row-major in their logical shape;
// layouts matter only to bitcast (see evaluator). A Value shares its arrays (shared_ptr to const),
// so tuples, get-tuple-element and loop state never copy tensor data.
//
// The float conversions here are XLA's CPU reference ones (Eigen's): round to nearest even,
// subnormals kept, NaN kept quiet — unlike the MXU path (engine/hardware/numerics.h), which flushes
// bf16 subnormals as the TPU does. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/hlo/primitive_type.h"
#include "engine/hlo/shape.h"
#include "engine/runtime/buffer_cache.h"

namespace tpuemu::engine::hlo {

// f32 -> bf16 / f16 bits and back (RNE, subnormals kept, overflow to inf, NaN quiet).
uint16_t F32ToBf16Bits(float x);
float Bf16BitsToF32(uint16_t bits);
uint16_t F32ToF16Bits(float x);
float F16BitsToF32(uint16_t bits);
// x rounded to `type` (bf16, f16) and held in an f32; f32 and other types: x unchanged.
float RoundToType(PrimitiveType type, float x);
// RoundToType over n floats, `from` into `to` (which may be `from`): the same bits, with bf16 as
// a loop the compiler vectorises (a bf16 dot's result and a convert round whole arrays).
void RoundToType(PrimitiveType type, const float* from, float* to, int64_t n);
// An int64 truncated to the width of an integer/pred type and re-extended (pred: x != 0).
int64_t CanonicalInt(PrimitiveType type, int64_t x);

// Element storage. Large buffers come from engine::BufferCache, as engine tensors' buffers
// do: a step's arrays reuse the pages the previous step's freed (a fresh mmap faults on every
// page, which cost as much as the elementwise work itself). Sized construction and resize leave
// values indeterminate; assign zeros where zeros are wanted.
using FloatStore = std::vector<float, RecyclingAllocator<float>>;
using IntStore = std::vector<int64_t, RecyclingAllocator<int64_t>>;

struct Array {
  PrimitiveType type = PrimitiveType::kF32;
  std::vector<int64_t> dims;
  FloatStore f;  // f16, bf16, f32
  IntStore i;    // pred, sNN, uNN

  // A zero-filled array; dims must be static and non-negative.
  static Array Zeros(PrimitiveType type, std::vector<int64_t> dims);
  // The same with indeterminate elements, for a kernel that writes every one. With a donor (may
  // be null) of the same element count and storage kind (float or integer), the result takes the
  // donor's buffer and the donor is left empty: an elementwise kernel may write its result over
  // an operand that dies with it, reading each element before it writes it.
  static Array Uninitialized(PrimitiveType type, std::vector<int64_t> dims, Array* donor = nullptr);
  bool floating() const { return IsFloating(type); }
  int64_t size() const;
  int rank() const { return static_cast<int>(dims.size()); }
  Shape shape() const { return Shape::Array(type, dims); }
  // Element k as double (u64 above 2^63 included) and set from double (rounded/saturated to the
  // type the way convert does).
  double GetDouble(int64_t k) const;
  void SetDouble(int64_t k, double v);
};

struct Value {
  std::shared_ptr<const Array> array;  // set when !is_tuple
  std::vector<Value> elements;         // set when is_tuple
  bool is_tuple = false;

  // The array is created non-const behind the pointer to const, so the evaluator may take the
  // buffer of a value nobody else holds (use_count 1) at its last use (evaluator.cpp).
  static Value Of(Array a) {
    return Value{std::shared_ptr<const Array>(std::make_shared<Array>(std::move(a))), {}, false};
  }
  static Value Tuple(std::vector<Value> elements) {
    return Value{nullptr, std::move(elements), true};
  }
  // Shape of the value (dims and types; no layout).
  Shape shape() const;
  // Appends the arrays of the leaves, in order (an array value is its own single leaf).
  void CollectArrays(std::vector<const Array*>& out) const;
};

// Row-major strides of dims (the last dimension has stride 1).
std::vector<int64_t> Strides(const std::vector<int64_t>& dims);
// Whether dims lists x.
bool Contains(const std::vector<int64_t>& dims, int64_t x);
// Product of dims; 1 for a scalar.
int64_t Product(const std::vector<int64_t>& dims);
// Advances a multi-index in row-major order; false after the last index.
bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims);
// Converts a float-kind value to the nearest value of an integer/pred type the way XLA's convert
// does: NaN -> 0, saturating at the type's range, truncating toward zero.
int64_t FloatToIntSaturating(PrimitiveType type, double x);

}  // namespace tpuemu::engine::hlo
