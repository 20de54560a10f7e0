#include "engine/runtime/tensor.h"

#include "engine/hardware/numerics.h"

namespace tpuemu::engine {

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kBF16:
      return "bf16";
    case DType::kI32:
      return "int32";
  }
  return "?";
}

Result<DType> ParseDType(std::string_view name) {
  if (name == "f32" || name == "float32") return DType::kF32;
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  if (name == "int32" || name == "i32" || name == "s32") return DType::kI32;
  return Status::InvalidArgument("unknown dtype '" + std::string(name) +
                                 "' (expected f32, bf16 or int32)");
}

int64_t DTypeBytes(DType dtype) { return dtype == DType::kBF16 ? 2 : 4; }

int64_t Shape::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string Shape::ToString() const {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

std::string ShapeString(DType dtype, const Shape& shape) {
  return std::string(DTypeName(dtype)) + shape.ToString();
}

Status CheckShape(const Shape& shape, int64_t max_elements, std::string_view what) {
  int64_t n = 1;
  for (int64_t d : shape.dims) {
    if (d < 0) {
      return Status::InvalidArgument(std::string(what) + ": negative dimension in shape " +
                                     shape.ToString());
    }
    if (d != 0 && n > max_elements / d) {
      return Status::InvalidArgument(std::string(what) + ": shape " + shape.ToString() +
                                     " exceeds the limit of " + std::to_string(max_elements) +
                                     " elements per tensor");
    }
    n *= d;
  }
  if (n > max_elements) {
    return Status::InvalidArgument(std::string(what) + ": shape " + shape.ToString() +
                                   " exceeds the limit of " + std::to_string(max_elements) +
                                   " elements per tensor");
  }
  return Status::Ok();
}

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), num_elements_(shape_.NumElements()) {
  if (dtype_ == DType::kI32) {
    i32_.assign(static_cast<size_t>(num_elements_), 0);
  } else {
    f32_.assign(static_cast<size_t>(num_elements_), 0.0f);
  }
}

Tensor Tensor::Uninitialized(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = t.shape_.NumElements();
  if (dtype == DType::kI32) {
    t.i32_.resize(static_cast<size_t>(t.num_elements_));
  } else {
    t.f32_.resize(static_cast<size_t>(t.num_elements_));
  }
  return t;
}

Result<Tensor> Tensor::FromF32(Shape shape, const std::vector<float>& values, DType dtype) {
  return FromF32(std::move(shape), FloatBuffer(values.begin(), values.end()), dtype);
}

Result<Tensor> Tensor::FromF32(Shape shape, FloatBuffer values, DType dtype) {
  if (dtype == DType::kI32) return Status::InvalidArgument("FromF32 needs a floating dtype");
  if (static_cast<int64_t>(values.size()) != shape.NumElements()) {
    return Status::InvalidArgument("got " + std::to_string(values.size()) + " values for shape " +
                                   ShapeString(dtype, shape));
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = t.shape_.NumElements();
  t.f32_ = std::move(values);
  t.RoundToDType();
  return t;
}

Result<Tensor> Tensor::FromI32(Shape shape, const std::vector<int32_t>& values) {
  if (static_cast<int64_t>(values.size()) != shape.NumElements()) {
    return Status::InvalidArgument("got " + std::to_string(values.size()) + " values for shape " +
                                   ShapeString(DType::kI32, shape));
  }
  Tensor t;
  t.dtype_ = DType::kI32;
  t.shape_ = std::move(shape);
  t.num_elements_ = t.shape_.NumElements();
  t.i32_.assign(values.begin(), values.end());
  return t;
}

Tensor Tensor::Scalar(float value) {
  Tensor t(DType::kF32, Shape{});
  t.f32_[0] = value;
  return t;
}

Tensor Tensor::AdoptF32(DType dtype, Shape shape, FloatBuffer values) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = t.shape_.NumElements();
  t.f32_ = std::move(values);
  return t;
}

void Tensor::RoundToDType() {
  if (dtype_ != DType::kBF16) return;
  RoundToBf16(f32_.data(), f32_.data(), f32_.size());  // vectorised; in place is fine
}

}  // namespace tpuemu::engine
