#include "service/nodes/guest_attributes.h"

#include <gtest/gtest.h>

#include "service/workers/guest_metadata.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

Node Pod() {
  Node node;
  node.key = {"p", "us-central2-b", "pod"};
  node.uid = "1234567890123456789";
  node.type = engine::FindAcceleratorType("v4-32").value();
  return node;
}

TEST(GuestAttributesTest, OneEntryPerWorkerWithHostKeyAndHostname) {
  Node node = Pod();
  ASSERT_EQ(node.type.workers, 4);
  Result<json> all = RenderGuestAttributes(node, "", {});
  ASSERT_TRUE(all.ok());
  const json& list = (*all)["guestAttributes"];
  ASSERT_EQ(list.size(), 4u);
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(list[w]["workerId"], std::to_string(w));
    EXPECT_EQ(list[w]["queryPath"], "");
    const json& items = list[w]["queryValue"]["items"];
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0]["namespace"], "hostkeys");
    EXPECT_EQ(items[0]["key"], "ssh-ed25519");
    // Google's worker host names, the same as the worker's own (service/workers/).
    EXPECT_EQ(items[1]["value"], WorkerHostname(node, w));
    EXPECT_TRUE(items[1]["value"].get<std::string>().ends_with("-w-" + std::to_string(w)));
  }
  // Stable: the same node renders the same keys.
  EXPECT_EQ(*RenderGuestAttributes(node, "", {}), *all);
  // A sandboxed worker's real host key replaces the made-up one.
  Result<json> real = RenderGuestAttributes(
      node, "hostkeys/", {"1"}, [](int w) { return "ssh-ed25519 AAAAreal" + std::to_string(w); });
  ASSERT_TRUE(real.ok());
  EXPECT_EQ((*real)["guestAttributes"][0]["queryValue"]["items"][0]["value"],
            "ssh-ed25519 AAAAreal1");
}

TEST(GuestAttributesTest, QueryPathAndWorkerIdsSelect) {
  Result<json> keys = RenderGuestAttributes(Pod(), "hostkeys/", {"2"});
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ((*keys)["guestAttributes"].size(), 1u);
  const json& entry = (*keys)["guestAttributes"][0];
  EXPECT_EQ(entry["workerId"], "2");
  EXPECT_EQ(entry["queryPath"], "hostkeys/");
  ASSERT_EQ(entry["queryValue"]["items"].size(), 1u);
  EXPECT_EQ(entry["queryValue"]["items"][0]["key"], "ssh-ed25519");
}

TEST(GuestAttributesTest, AWorkerOutsideTheNodeIsRefused) {
  for (const char* id : {"4", "-1", "x", "1x", ""}) {
    Result<json> bad = RenderGuestAttributes(Pod(), "", {id});
    ASSERT_FALSE(bad.ok()) << id;
    EXPECT_EQ(bad.status().message(), std::string("Invalid value for field 'workerIds': '") + id +
                                          "'; node 'projects/p/locations/us-central2-b/nodes/"
                                          "pod' has workers 0..3");
  }
}

}  // namespace
}  // namespace tpuemu::service
