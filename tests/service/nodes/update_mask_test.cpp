#include "service/nodes/update_mask.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tpuemu::service {
namespace {

using nlohmann::json;

constexpr char kSupported[] =
    "description, tags, labels, metadata, network_config.enable_external_ips, data_disks.";

TEST(NodeUpdateMaskTest, AcceptsSnakeAndCamelCasePaths) {
  Result<NodeUpdateMask> mask = NodeUpdateMask::Parse(
      {"description", "networkConfig.enableExternalIps", "dataDisks", "data_disks", "labels"});
  ASSERT_TRUE(mask.ok()) << mask.status().ToString();
  EXPECT_EQ(mask->paths(),
            (std::vector<std::string>{"description", "network_config.enable_external_ips",
                                      "data_disks", "data_disks", "labels"}));
}

TEST(NodeUpdateMaskTest, AnEmptyMaskIsRefusedListingThePaths) {
  Result<NodeUpdateMask> mask = NodeUpdateMask::Parse({});
  ASSERT_FALSE(mask.ok());
  EXPECT_EQ(mask.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mask.status().message(),
            std::string("Field 'updateMask' is required; supported paths: ") + kSupported);
}

TEST(NodeUpdateMaskTest, AnUnsupportedPathIsRefusedAsTheClientWroteIt) {
  for (const std::string path : {"runtimeVersion", "accelerator_type", "networkConfig", "name"}) {
    Result<NodeUpdateMask> mask = NodeUpdateMask::Parse({"labels", path});
    ASSERT_FALSE(mask.ok()) << path;
    EXPECT_EQ(mask.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(mask.status().message(), "Invalid value for field 'updateMask': path '" + path +
                                           "' cannot be updated. Supported paths: " + kSupported);
  }
}

TEST(NodeUpdateMaskTest, CopiesOnlyTheMaskedFields) {
  json fields = {{"description", "old"},
                 {"labels", {{"a", "1"}}},
                 {"metadata", {{"k", "v"}}},
                 {"networkConfig", {{"network", "n"}, {"enableExternalIps", false}}}};
  const json patch = {{"description", "new"},
                      {"labels", {{"b", "2"}}},
                      {"metadata", {{"ignored", "x"}}},
                      {"networkConfig", {{"enableExternalIps", true}, {"network", "ignored"}}},
                      {"dataDisks", json::array({{{"sourceDisk", "d"}}})}};
  NodeUpdateMask::Parse({"labels", "networkConfig.enableExternalIps", "data_disks"})
      ->Apply(patch, fields);
  const json want = {{"description", "old"},
                     {"labels", {{"b", "2"}}},
                     {"metadata", {{"k", "v"}}},
                     {"networkConfig", {{"network", "n"}, {"enableExternalIps", true}}},
                     {"dataDisks", json::array({{{"sourceDisk", "d"}}})}};
  EXPECT_EQ(fields, want);
}

TEST(NodeUpdateMaskTest, AMaskedFieldAbsentFromThePatchIsCleared) {
  json fields = {{"description", "old"},
                 {"tags", json::array({"t"})},
                 {"networkConfig", {{"network", "n"}, {"enableExternalIps", true}}}};
  NodeUpdateMask::Parse({"description", "tags", "network_config.enable_external_ips"})
      ->Apply(json::object(), fields);
  const json want = {{"networkConfig", {{"network", "n"}, {"enableExternalIps", false}}}};
  EXPECT_EQ(fields, want);
}

}  // namespace
}  // namespace tpuemu::service
