// Tensors of the engine: element type, shape, and host storage.
//
// Storage follows what a TPU computes with: f32 and bf16 tensors both hold f32 values (a bf16
// tensor's values are always bf16-representable — every constructor and mutator that takes
// arbitrary floats rounds them with numerics.h's RoundToBf16: RNE, subnormals flushed, like the
// MXU path); int32 tensors hold int32.
// The *device* size of a tensor (HBM accounting) uses the real element width: 2 bytes for bf16.
// A Tensor owns its buffer; copies are deep, moves are cheap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/runtime/buffer_cache.h"

namespace tpuemu::engine {

enum class DType { kF32, kBF16, kI32 };

// "f32", "bf16", "int32".
std::string_view DTypeName(DType dtype);
// Accepts "f32"/"float32", "bf16"/"bfloat16", "int32"/"i32"; INVALID_ARGUMENT otherwise.
Result<DType> ParseDType(std::string_view name);
// Bytes one element occupies in HBM: 4, 2, 4.
int64_t DTypeBytes(DType dtype);
inline bool IsFloating(DType dtype) { return dtype != DType::kI32; }

struct Shape {
  std::vector<int64_t> dims;

  Shape() = default;
  Shape(std::initializer_list<int64_t> d) : dims(d) {}
  explicit Shape(std::vector<int64_t> d) : dims(std::move(d)) {}

  int rank() const { return static_cast<int>(dims.size()); }
  int64_t dim(int i) const { return dims[static_cast<size_t>(i)]; }
  // Product of dims; 1 for a scalar. Callers validate with CheckShape first for untrusted dims.
  int64_t NumElements() const;
  // "[64,128]"; "[]" for a scalar.
  std::string ToString() const;
  friend bool operator==(const Shape&, const Shape&) = default;
};

// "f32[64,128]": the form every shape error uses (XLA's notation).
std::string ShapeString(DType dtype, const Shape& shape);
// INVALID_ARGUMENT if a dim is negative or the element count exceeds max_elements (or overflows).
Status CheckShape(const Shape& shape, int64_t max_elements, std::string_view what);

// Tensor storage. Large buffers are recycled (buffer_cache.h) so a step does not re-fault the
// pages of the previous step's tensors.
using FloatBuffer = std::vector<float, RecyclingAllocator<float>>;
using IntBuffer = std::vector<int32_t, RecyclingAllocator<int32_t>>;

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled.
  Tensor(DType dtype, Shape shape);
  // Indeterminate values (recycled memory): for a kernel output that the kernel overwrites.
  static Tensor Uninitialized(DType dtype, Shape shape);
  // values.size() must equal shape.NumElements() (INVALID_ARGUMENT otherwise); rounded if bf16.
  static Result<Tensor> FromF32(Shape shape, FloatBuffer values, DType dtype = DType::kF32);
  static Result<Tensor> FromF32(Shape shape, const std::vector<float>& values,
                                DType dtype = DType::kF32);
  static Result<Tensor> FromF32(Shape shape, std::initializer_list<float> values,
                                DType dtype = DType::kF32) {
    return FromF32(std::move(shape), FloatBuffer(values), dtype);
  }
  static Result<Tensor> FromI32(Shape shape, const std::vector<int32_t>& values);
  // A scalar f32[].
  static Tensor Scalar(float value);
  // Takes `values` as they are, without rounding: for values that already hold what `dtype`
  // holds (an HLO array's, engine/hlo/tensor_bridge.h). values.size() must equal
  // shape.NumElements() (the caller checked); dtype must be floating.
  static Tensor AdoptF32(DType dtype, Shape shape, FloatBuffer values);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  // Device bytes (bf16 counts 2 per element).
  int64_t bytes() const { return num_elements_ * DTypeBytes(dtype_); }

  // Valid for f32 and bf16 tensors. Writers to a bf16 tensor must call RoundToDType afterwards.
  float* f32() { return f32_.data(); }
  const float* f32() const { return f32_.data(); }
  const FloatBuffer& f32_values() const { return f32_; }
  // Valid for int32 tensors.
  int32_t* i32() { return i32_.data(); }
  const int32_t* i32() const { return i32_.data(); }

  // Rounds every value to bf16 if the dtype is bf16; no-op otherwise.
  void RoundToDType();
  // Same dtype and shape, reinterpreted (the element count must match; the caller checked).
  void Reshape(Shape shape) { shape_ = std::move(shape); }

 private:
  DType dtype_ = DType::kF32;
  Shape shape_;
  int64_t num_elements_ = 0;  // a default Tensor is an empty placeholder
  FloatBuffer f32_;
  IntBuffer i32_;
};

}  // namespace tpuemu::engine
