// Parameter values: .npy files (format, dtype rules and errors), explicit values, seeds, and the
// order of precedence.
#include "engine/hlo/inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engine/hlo/npy.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using ::testing::HasSubstr;

// A hand-written NumPy 1.0 file: header dict padded to 64 bytes, then the data.
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data,
                bool fortran = false) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size());
  out += '\0';
  return out + header + data;
}

std::string Raw(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

TEST(HloNpy, ReadsEveryDtypeIntoItsParameterType) {
  const float f[3] = {1.5f, -2, 0.3f};
  Result<Array> a =
      ReadNpy(Npy("<f4", "(3,)", Raw(f, 12)), Shape::Array(PrimitiveType::kF32, {3}), "p");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->f, (FloatStore{1.5f, -2, 0.3f}));
  Result<Array> b =
      ReadNpy(Npy("<f4", "(3,)", Raw(f, 12)), Shape::Array(PrimitiveType::kBF16, {3}), "p");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->f[2], 0.30078125f);  // rounded to bf16
  const double d[2][2] = {{1, 2}, {3, 4}};
  Result<Array> c =
      ReadNpy(Npy("<f8", "(2, 2)", Raw(d, 32)), Shape::Array(PrimitiveType::kF32, {2, 2}), "p");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->f, (FloatStore{1, 2, 3, 4}));
  const uint16_t bits[1] = {0x3f80};
  Result<Array> v2 =
      ReadNpy(Npy("<V2", "(1,)", Raw(bits, 2)), Shape::Array(PrimitiveType::kBF16, {1}), "p");
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->f[0], 1.0f);
  const int64_t i[2] = {7, -3};
  Result<Array> s =
      ReadNpy(Npy("<i8", "(2,)", Raw(i, 16)), Shape::Array(PrimitiveType::kS32, {2}), "p");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->i, (IntStore{7, -3}));
  const uint8_t flags[2] = {1, 0};
  Result<Array> pr =
      ReadNpy(Npy("|b1", "(2,)", Raw(flags, 2)), Shape::Array(PrimitiveType::kPred, {2}), "p");
  ASSERT_TRUE(pr.ok());
  EXPECT_EQ(pr->i, (IntStore{1, 0}));
  const float scalar = 9;
  EXPECT_TRUE(
      ReadNpy(Npy("<f4", "()", Raw(&scalar, 4)), Shape::Array(PrimitiveType::kF32, {}), "p").ok());
}

TEST(HloNpy, ErrorsNameTheProblem) {
  const float f[2] = {1, 2};
  const Shape f32_2 = Shape::Array(PrimitiveType::kF32, {2});
  auto message = [](const Result<Array>& r) {
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_THAT(message(ReadNpy("not numpy", f32_2, "parameter 0")),
              HasSubstr("parameter 0: not a .npy file (bad magic)"));
  EXPECT_THAT(
      message(ReadNpy(Npy("<f4", "(3,)", Raw(f, 8)), Shape::Array(PrimitiveType::kF32, {3}), "p")),
      HasSubstr("8 data bytes for 3 elements of 4 byte(s)"));
  EXPECT_THAT(message(ReadNpy(Npy("<f4", "(1, 2)", Raw(f, 8)), f32_2, "p")),
              HasSubstr("the array has shape f32[1,2], expected f32[2]"));
  EXPECT_THAT(message(ReadNpy(Npy(">f4", "(2,)", Raw(f, 8)), f32_2, "p")), HasSubstr("big-endian"));
  EXPECT_THAT(message(ReadNpy(Npy("<f4", "(2,)", Raw(f, 8), true), f32_2, "p")),
              HasSubstr("Fortran-order"));
  EXPECT_THAT(
      message(ReadNpy(Npy("<f4", "(2,)", Raw(f, 8)), Shape::Array(PrimitiveType::kS32, {2}), "p")),
      HasSubstr("a '<f4' array cannot feed a s32 parameter"));
  const int32_t big[2] = {1, 300};
  EXPECT_THAT(
      message(ReadNpy(Npy("<i4", "(2,)", Raw(big, 8)), Shape::Array(PrimitiveType::kS8, {2}), "p")),
      HasSubstr("element 1 (300) does not fit s8"));
  EXPECT_THAT(message(ReadNpy(Npy("<c8", "(2,)", Raw(f, 8)), f32_2, "p")),
              HasSubstr("unsupported dtype '<c8'"));
}

TEST(HloNpy, WriteThenReadRoundTrips) {
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kF16, PrimitiveType::kS8,
                          PrimitiveType::kU16, PrimitiveType::kS64, PrimitiveType::kPred}) {
    Array a = Array::Zeros(t, {2, 3});
    for (int64_t k = 0; k < 6; ++k) a.SetDouble(k, t == PrimitiveType::kPred ? k % 2 : k - 2);
    Result<Array> back = ReadNpy(WriteNpy(a), a.shape(), "round trip");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->f, a.f);
    EXPECT_EQ(back->i, a.i);
  }
  // bf16 is written as float32 (NumPy has no bf16), exactly.
  Array b = Array::Zeros(PrimitiveType::kBF16, {1});
  b.f[0] = 0.30078125f;
  Result<Array> back = ReadNpy(WriteNpy(b), b.shape(), "bf16");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->f, b.f);
  EXPECT_NE(WriteNpy(b).find("'<f4'"), std::string::npos);
}

class HloInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tpuemu_hlo_inputs_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const Array& a) {
    std::ofstream(dir_ / name, std::ios::binary) << WriteNpy(a);
  }
  std::filesystem::path dir_;
};

constexpr const char* kTwoParams = R"(HloModule m, replica_count=2
ENTRY e {
  a = f32[2] parameter(0)
  t = (s32[], f32[2]) parameter(1)
  ROOT r = f32[2] negate(a)
})";

TEST_F(HloInputs, ValuesThenNpyFilesThenTheSeed) {
  Module m = testing::MustParse(kTwoParams);
  Array leaf0 = Array::Zeros(PrimitiveType::kS32, {});
  leaf0.i[0] = 42;
  Write("1.0.npy", leaf0);
  Array per_device = Array::Zeros(PrimitiveType::kF32, {2});
  per_device.f = {5, 6};
  Write("0.device1.npy", per_device);
  InputOptions options;
  options.npy_dir = dir_.string();
  options.seed = 9;
  auto args = MakeArguments(m, options);
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  ASSERT_EQ(args->size(), 2u);
  // device 0: a from the seed, device 1: a from its own file; t's first leaf from 1.0.npy.
  EXPECT_EQ((*args)[1][0].array->f, (FloatStore{5, 6}));
  EXPECT_NE((*args)[0][0].array->f, (FloatStore{5, 6}));
  EXPECT_EQ((*args)[0][1].elements[0].array->i[0], 42);
  EXPECT_EQ((*args)[0][1].elements[1].array->f, (*args)[1][1].elements[1].array->f);  // same seed
  options.values[0] = {7};
  args = MakeArguments(m, options);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ((*args)[1][0].array->f, (FloatStore{7, 7}));  // values win over files
  options.distinct_per_device = true;
  options.values.clear();
  args = MakeArguments(m, options);
  ASSERT_TRUE(args.ok());
  EXPECT_NE((*args)[0][1].elements[1].array->f, (*args)[1][1].elements[1].array->f);
}

TEST_F(HloInputs, Errors) {
  Module m = testing::MustParse(kTwoParams);
  InputOptions options;
  options.values[1] = {1};
  EXPECT_THAT(MakeArguments(m, options).status().message(),
              HasSubstr("parameter 1 (%t) is a tuple; feed it with .npy files"));
  options.values.clear();
  options.values[0] = {1, 2, 3};
  EXPECT_THAT(MakeArguments(m, options).status().message(),
              HasSubstr("parameter 0 (%a) has 2 elements, got 3 values"));
  options.values.clear();
  options.values[5] = {1};
  EXPECT_THAT(MakeArguments(m, options).status().message(),
              HasSubstr("values given for parameter 5, but the entry has 2 parameter(s)"));
  options.values.clear();
  std::ofstream(dir_ / "0.npy") << "garbage";
  options.npy_dir = dir_.string();
  EXPECT_THAT(MakeArguments(m, options).status().message(), HasSubstr("not a .npy file"));
  Limits limits;
  limits.max_tensor_elements = 1;
  EXPECT_THAT(MakeArguments(m, InputOptions{}, limits).status().message(),
              HasSubstr("has 2 elements, more than the limit of 1"));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
