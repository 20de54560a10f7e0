#include "service/catalog/catalog.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

TEST(CatalogTest, EveryGenerationIsOfferedSomewhere) {
  const Catalog& c = Catalog::Default();
  for (const char* type : {"v2-8", "v3-8", "v4-8", "v5litepod-8", "v5p-8", "v6e-8"}) {
    Result<engine::AcceleratorType> t = engine::FindAcceleratorType(type);
    ASSERT_TRUE(t.ok()) << type;
    bool offered = false;
    for (const Zone& z : c.zones()) offered = offered || c.Offers(z.id, *t);
    EXPECT_TRUE(offered) << type;
  }
}

TEST(CatalogTest, ZonesOfferOnlyTheirGenerations) {
  const Catalog& c = Catalog::Default();
  EXPECT_TRUE(c.Offers("us-central2-b", *engine::FindAcceleratorType("v4-4096")));
  EXPECT_FALSE(c.Offers("us-central2-b", *engine::FindAcceleratorType("v5p-8")));
  EXPECT_TRUE(c.Offers("us-east1-d", *engine::FindAcceleratorType("v6e-256")));
  // v3 pods are only in europe-west4-a; single-host v3 is in us-central1-a too.
  EXPECT_TRUE(c.Offers("us-central1-a", *engine::FindAcceleratorType("v3-8")));
  EXPECT_FALSE(c.Offers("us-central1-a", *engine::FindAcceleratorType("v3-32")));
  EXPECT_TRUE(c.Offers("europe-west4-a", *engine::FindAcceleratorType("v3-2048")));
}

TEST(CatalogTest, TypesInZoneListsEverySizeOfferedThere) {
  std::vector<engine::AcceleratorType> types = Catalog::Default().TypesInZone("us-east1-d");
  ASSERT_EQ(types.size(), 8u);  // v6e-1 … v6e-256
  EXPECT_EQ(types.front().name, "v6e-1");
  EXPECT_EQ(types.back().name, "v6e-256");
}

TEST(CatalogTest, RuntimeVersionsAndRegions) {
  const Catalog& c = Catalog::Default();
  EXPECT_TRUE(c.HasRuntimeVersion("tpu-ubuntu2204-base"));
  EXPECT_TRUE(c.HasRuntimeVersion("v2-alpha-tpuv6e"));
  EXPECT_FALSE(c.HasRuntimeVersion("tpu-vm-tf-9.9.9"));
  EXPECT_EQ(RegionOf("us-central1-a"), "us-central1");
  ASSERT_NE(c.FindZone("europe-west4-b"), nullptr);
  EXPECT_EQ(c.FindZone("europe-west4-b")->region, "europe-west4");
  EXPECT_EQ(c.FindZone("mars-north1-a"), nullptr);
}

TEST(CatalogTest, ListLocationIsEveryZoneOrOneOfTheCatalog) {
  const Catalog& c = Catalog::Default();
  EXPECT_TRUE(c.CheckListLocation("p", "-").ok());
  EXPECT_TRUE(c.CheckListLocation("p", "us-central2-b").ok());
  Status unknown = c.CheckListLocation("p", "mars-north1-a");
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_EQ(unknown.message(), "Resource 'projects/p/locations/mars-north1-a' was not found");
}

}  // namespace
}  // namespace tpuemu::service
