// service/node_cache: a view read before or during a batch of writes is never cached past it.
#include "service/nodes/node_cache.h"

#include <gtest/gtest.h>

#include "engine/hardware.h"

namespace tpuemu::service {
namespace {

Node MakeNode(const std::string& id, NodeState state) {
  Node n;
  n.key = {"p", "us-central2-b", id};
  n.state = state;
  n.type = *engine::FindAcceleratorType("v4-8");
  return n;
}

TEST(NodeCacheTest, CachesAViewReadBetweenWrites) {
  NodeCache cache;
  const uint64_t g = cache.Generation();
  auto view = cache.Insert(MakeNode("a", NodeState::kReady), g);
  EXPECT_NE(view->json.find("\"READY\""), std::string::npos) << view->json;
  EXPECT_EQ(cache.Find("projects/p/locations/us-central2-b/nodes/a"), view);
}

TEST(NodeCacheTest, AWriteEmptiesTheCacheAndBlocksInsertsUntilItEnds) {
  NodeCache cache;
  const std::string name = "projects/p/locations/us-central2-b/nodes/a";
  cache.Insert(MakeNode("a", NodeState::kCreating), cache.Generation());
  cache.BeginWrite();
  EXPECT_EQ(cache.Find(name), nullptr);
  // Read while the batch writes: returned to its reader, never cached.
  auto during = cache.Insert(MakeNode("a", NodeState::kCreating), cache.Generation());
  EXPECT_NE(during, nullptr);
  EXPECT_EQ(cache.Find(name), nullptr);
  cache.EndWrite();
  EXPECT_EQ(cache.Find(name), nullptr);
  cache.Insert(MakeNode("a", NodeState::kReady), cache.Generation());
  ASSERT_NE(cache.Find(name), nullptr);
  EXPECT_EQ(cache.Find(name)->node.state, NodeState::kReady);
}

TEST(NodeCacheTest, AViewReadBeforeAWriteIsNotCachedAfterIt) {
  NodeCache cache;
  const uint64_t before = cache.Generation();  // the reader starts reading the store here
  cache.BeginWrite();
  cache.EndWrite();
  cache.Insert(MakeNode("a", NodeState::kCreating), before);  // the stale row arrives late
  EXPECT_EQ(cache.Find("projects/p/locations/us-central2-b/nodes/a"), nullptr);
}

}  // namespace
}  // namespace tpuemu::service
