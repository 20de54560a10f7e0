// service/node_cache: a view read before a batch of writes, or of a node the batch writes, is never
// cached past it; the nodes a batch does not write stay cached.
#include "service/nodes/node_cache.h"

#include <gtest/gtest.h>

#include "engine/hardware/hardware.h"

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

TEST(NodeCacheTest, ATouchedNodeLeavesTheCacheAndTakesNoInsertUntilTheBatchEnds) {
  NodeCache cache;
  const std::string name = "projects/p/locations/us-central2-b/nodes/a";
  cache.Insert(MakeNode("a", NodeState::kCreating), cache.Generation());
  cache.BeginWrite();
  ASSERT_NE(cache.Find(name), nullptr);  // not written (yet) by this batch: still the committed row
  cache.Touch(name);
  EXPECT_EQ(cache.Find(name), nullptr);
  // Read while the batch writes it: returned to its reader, never cached.
  auto during = cache.Insert(MakeNode("a", NodeState::kCreating), cache.Generation());
  EXPECT_NE(during, nullptr);
  EXPECT_EQ(cache.Find(name), nullptr);
  cache.EndWrite();
  EXPECT_EQ(cache.Find(name), nullptr);
  cache.Insert(MakeNode("a", NodeState::kReady), cache.Generation());
  ASSERT_NE(cache.Find(name), nullptr);
  EXPECT_EQ(cache.Find(name)->node.state, NodeState::kReady);
}

TEST(NodeCacheTest, NodesABatchDoesNotWriteStayCachedAcrossIt) {
  NodeCache cache;
  const std::string a = "projects/p/locations/us-central2-b/nodes/a";
  const std::string b = "projects/p/locations/us-central2-b/nodes/b";
  cache.Insert(MakeNode("a", NodeState::kReady), cache.Generation());
  cache.Insert(MakeNode("b", NodeState::kReady), cache.Generation());
  cache.BeginWrite();
  cache.Touch(b);
  // An untouched node read during the batch may be cached: the batch does not change it.
  cache.Insert(MakeNode("c", NodeState::kReady), cache.Generation());
  cache.EndWrite();
  EXPECT_NE(cache.Find(a), nullptr);
  EXPECT_EQ(cache.Find(b), nullptr);
  EXPECT_NE(cache.Find("projects/p/locations/us-central2-b/nodes/c"), nullptr);
  cache.Clear();
  EXPECT_EQ(cache.Find(a), nullptr);
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
