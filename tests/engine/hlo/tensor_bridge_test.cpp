// engine/hlo/tensor_bridge.h: the conversions between the engine's tensors and the HLO stack's
// arrays keep every value, copy what a caller still holds and move what nobody else does.
#include "engine/hlo/tensor_bridge.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <limits>

#include "engine/runtime/pool.h"

namespace tpuemu::engine::hlo {
namespace {

TEST(TensorBridge, DTypesAndElementTypesMapBothWays) {
  for (DType d : {DType::kF32, DType::kBF16, DType::kI32}) {
    Result<DType> back = GraphDType(LoweredType(d));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, d);
  }
  EXPECT_EQ(LoweredType(DType::kI32), PrimitiveType::kS32);
  EXPECT_EQ(LoweredType(DType::kBF16), PrimitiveType::kBF16);
  Result<DType> f16 = GraphDType(PrimitiveType::kF16);
  ASSERT_FALSE(f16.ok());
  EXPECT_EQ(f16.status().code(), StatusCode::kInternal);
}

TEST(TensorBridge, AnArgumentIsACopyOfTheTensorsValues) {
  Result<Tensor> t =
      Tensor::FromF32(engine::Shape{2, 3}, {1, -2, 3.5f, 0, 1e30f, -0.0f}, DType::kBF16);
  ASSERT_TRUE(t.ok());
  Value v = ArgumentOf(*t);
  ASSERT_FALSE(v.is_tuple);
  EXPECT_EQ(v.array->type, PrimitiveType::kBF16);
  EXPECT_EQ(v.array->dims, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(v.array->f.size(), 6u);
  EXPECT_EQ(std::memcmp(v.array->f.data(), t->f32(), 6 * sizeof(float)), 0);
  EXPECT_NE(v.array->f.data(), t->f32());  // the caller's tensor stays the caller's

  Result<Tensor> labels =
      Tensor::FromI32(engine::Shape{3}, {7, -1, std::numeric_limits<int32_t>::max()});
  ASSERT_TRUE(labels.ok());
  Value l = ArgumentOf(*labels);
  EXPECT_EQ(l.array->type, PrimitiveType::kS32);
  EXPECT_EQ(l.array->i, (IntStore{7, -1, std::numeric_limits<int32_t>::max()}));
}

TEST(TensorBridge, ASolelyHeldFloatArrayMovesIntoTheTensor) {
  Array a = Array::Uninitialized(PrimitiveType::kF32, {4, 5});
  for (int64_t k = 0; k < a.size(); ++k)
    a.f[static_cast<size_t>(k)] = 0.25f * static_cast<float>(k);
  Value v = Value::Of(std::move(a));
  const float* buffer = v.array->f.data();
  std::optional<Tensor> t = TensorOf(std::move(v.array), DType::kF32, ParallelContext{});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->f32(), buffer);  // the same buffer: no copy
  EXPECT_EQ(t->shape(), (engine::Shape{4, 5}));
  EXPECT_EQ(t->f32()[19], 4.75f);
}

TEST(TensorBridge, ASharedArrayIsCopiedAndKeepsItsValues) {
  Array a = Array::Uninitialized(PrimitiveType::kBF16, {3});
  a.f = {1.0f, -2.5f, 0.0078125f};
  const Value v = Value::Of(std::move(a));
  std::optional<Tensor> t = TensorOf(v.array, DType::kBF16, ParallelContext{});
  ASSERT_TRUE(t.has_value());
  EXPECT_NE(t->f32(), v.array->f.data());
  EXPECT_EQ(v.array->f.size(), 3u);  // the other holder's array is untouched
  EXPECT_EQ(t->dtype(), DType::kBF16);
  EXPECT_EQ(t->f32_values(), (FloatBuffer{1.0f, -2.5f, 0.0078125f}));
}

TEST(TensorBridge, AnIntArrayIsCopiedInChunksAndStopsWithItsToken) {
  const int64_t n = (int64_t{1} << 20) + 3;
  Array a = Array::Uninitialized(PrimitiveType::kS32, {n});
  for (int64_t k = 0; k < n; ++k) a.i[static_cast<size_t>(k)] = k % 1000 - 500;
  Value v = Value::Of(std::move(a));
  Pool pool(2);
  ParallelContext parallel;
  parallel.pool = &pool;
  std::optional<Tensor> t = TensorOf(v.array, DType::kI32, parallel);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->i32()[0], -500);
  EXPECT_EQ(t->i32()[n - 1], static_cast<int32_t>((n - 1) % 1000 - 500));
  std::atomic<bool> stop{true};
  parallel.cancel.flag = &stop;
  EXPECT_FALSE(TensorOf(v.array, DType::kI32, parallel).has_value());
  EXPECT_FALSE(ArgumentOf(*t, parallel).has_value());
}

}  // namespace
}  // namespace tpuemu::engine::hlo
