#include "engine/hlo/tensor_bridge.h"

#include <algorithm>
#include <string>
#include <utility>

namespace tpuemu::engine::hlo {
namespace {

// A job's step copies every weight in and every gradient out: chunks into a recycled buffer,
// stopping with the job.
constexpr int64_t kCopyGrain = int64_t{1} << 18;

}  // namespace

PrimitiveType LoweredType(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return PrimitiveType::kBF16;
    case DType::kI32:
      return PrimitiveType::kS32;
    case DType::kF32:
      break;
  }
  return PrimitiveType::kF32;
}

Result<DType> GraphDType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF32:
      return DType::kF32;
    case PrimitiveType::kBF16:
      return DType::kBF16;
    case PrimitiveType::kS32:
      return DType::kI32;
    default:
      break;
  }
  return Status::Internal("no engine dtype for " + std::string(PrimitiveTypeName(type)));
}

std::optional<Value> ArgumentOf(const Tensor& t, const ParallelContext& parallel) {
  Array a = Array::Uninitialized(LoweredType(t.dtype()), t.shape().dims);
  const bool ints = t.dtype() == DType::kI32;
  const bool done =
      ParallelChunks(parallel, t.num_elements(), kCopyGrain, [&](int64_t begin, int64_t end) {
        if (ints) {
          std::copy(t.i32() + begin, t.i32() + end, a.i.begin() + begin);
        } else {
          std::copy(t.f32() + begin, t.f32() + end, a.f.begin() + begin);
        }
      });
  if (!done) return std::nullopt;
  return Value::Of(std::move(a));
}

Value ArgumentOf(const Tensor& t) { return *ArgumentOf(t, ParallelContext{}); }

std::optional<Tensor> TensorOf(std::shared_ptr<const Array> array, DType dtype,
                               const ParallelContext& parallel) {
  engine::Shape shape(array->dims);
  if (dtype != DType::kI32 && array.use_count() == 1) {
    // Nobody else holds it: it was made non-const behind the pointer to const (Value::Of), and
    // its f32 values are the tensor's (a bf16 array's are bf16 values, as a bf16 tensor's).
    Array& owned = const_cast<Array&>(*array);
    return Tensor::AdoptF32(dtype, std::move(shape), std::move(owned.f));
  }
  const Array& a = *array;
  Tensor t = Tensor::Uninitialized(dtype, std::move(shape));
  const bool done =
      ParallelChunks(parallel, t.num_elements(), kCopyGrain, [&](int64_t begin, int64_t end) {
        if (dtype == DType::kI32) {
          for (int64_t k = begin; k < end; ++k) {
            t.i32()[k] = static_cast<int32_t>(a.i[static_cast<size_t>(k)]);
          }
        } else {
          std::copy(a.f.begin() + begin, a.f.begin() + end, t.f32() + begin);
        }
      });
  if (!done) return std::nullopt;
  return t;
}

}  // namespace tpuemu::engine::hlo
