#include "engine/hardware/hardware.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tpuemu::engine {
namespace {

TEST(HardwareTest, DerivedPeakMatchesPublishedWithinOnePercent) {
  for (const ChipSpec& spec : AllGenerations()) {
    double ratio = spec.PeakBf16Flops() / spec.published_peak_bf16_flops;
    EXPECT_NEAR(ratio, 1.0, 0.01) << spec.name << " derives " << spec.PeakBf16Flops() / 1e12
                                  << " TF";
  }
}

TEST(HardwareTest, V4TypesCountTensorCoresAndV5eCountsChips) {
  Result<AcceleratorType> v4 = FindAcceleratorType("v4-32");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->chips, 16);
  EXPECT_EQ(v4->tensorcores, 32);
  EXPECT_EQ(v4->topology, "2x2x4");
  EXPECT_EQ(v4->workers, 4);

  Result<AcceleratorType> v5e = FindAcceleratorType("v5litepod-16");
  ASSERT_TRUE(v5e.ok());
  EXPECT_EQ(v5e->chips, 16);
  EXPECT_EQ(v5e->tensorcores, 16);
  EXPECT_EQ(v5e->topology, "4x4");
  EXPECT_EQ(v5e->workers, 4);
}

TEST(HardwareTest, EveryTopologyHasAsManyChipsAsTheType) {
  for (const AcceleratorType& t : AllAcceleratorTypes()) {
    int product = 1;
    std::size_t start = 0;
    while (start <= t.topology.size()) {
      std::size_t x = t.topology.find('x', start);
      product *= std::stoi(t.topology.substr(start, x - start));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    EXPECT_EQ(product, t.chips) << t.name << " " << t.topology;
    EXPECT_GE(t.workers, 1) << t.name;
  }
}

TEST(HardwareTest, ConfigLookupAcceptsNamesAndEnumNumbers) {
  Result<AcceleratorType> by_name = FindAcceleratorTypeByConfig("V5P", "2x2x1");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->name, "v5p-8");
  Result<AcceleratorType> by_number = FindAcceleratorTypeByConfig("7", "2x2x2");
  ASSERT_TRUE(by_number.ok());
  EXPECT_EQ(by_number->name, "v4-16");
  EXPECT_EQ(FindAcceleratorTypeByConfig("V4", "3x3x3").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(HardwareTest, SliceFromUnknownTypeIsNotFound) {
  Result<Slice> slice = Slice::FromAcceleratorType("v9-8");
  ASSERT_FALSE(slice.ok());
  EXPECT_EQ(slice.status().code(), StatusCode::kNotFound);
  EXPECT_NE(slice.status().message().find("v9-8"), std::string::npos);
}

TEST(HardwareTest, SliceTotalsScaleWithChips) {
  Result<Slice> slice = Slice::FromAcceleratorType("v6e-256");
  ASSERT_TRUE(slice.ok());
  EXPECT_EQ(slice->chips(), 256);
  EXPECT_EQ(slice->mxus(), 512);
  EXPECT_NEAR(slice->PeakBf16Flops() / 1e15, 256 * 0.9175, 0.01);
}

}  // namespace
}  // namespace tpuemu::engine
