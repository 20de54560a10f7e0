// Collectives over emulated devices in lockstep: every device's result by hand, for replica and
// partition group modes, the tuple and array forms, and devices that diverge.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::Floats;
using ::testing::HasSubstr;

// Runs a module whose entry takes no parameters; returns every device's result.
std::vector<Value> RunAll(const std::string& text) {
  Result<Module> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return {};
  Result<EvalResult> r =
      Evaluate(*m, std::vector<std::vector<Value>>(static_cast<size_t>(m->devices())));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->outputs : std::vector<Value>{};
}

// Each device's x = [id, id + 10] with id its replica id (or partition id).
std::string CollectiveModule(const std::string& header, const std::string& id_op,
                             const std::string& root) {
  return "HloModule m, " + header + R"(
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  id = u32[] )" +
         id_op + R"(
  f = f32[] convert(id)
  ten = f32[] constant(10)
  f10 = f32[] add(f, ten)
  a = f32[1] reshape(f)
  b = f32[1] reshape(f10)
  x = f32[2] concatenate(a, b), dimensions={0}
  )" + root +
         "\n}\n";
}

TEST(HloEvalCollectives, AllReduceOverAllAndOverSubgroups) {
  std::vector<Value> out =
      RunAll(CollectiveModule("replica_count=4", "replica-id()",
                              "ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=add"));
  ASSERT_EQ(out.size(), 4u);
  for (const Value& v : out) EXPECT_EQ(Floats(v), (std::vector<float>{6, 46}));
  out = RunAll(CollectiveModule(
      "replica_count=4", "replica-id()",
      "ROOT r = f32[2] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=add"));
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{2, 22}));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{4, 24}));
  EXPECT_EQ(Floats(out[2]), (std::vector<float>{2, 22}));
}

TEST(HloEvalCollectives, AllGatherReduceScatterAllToAll) {
  std::vector<Value> out = RunAll(
      CollectiveModule("replica_count=2", "replica-id()",
                       "ROOT g = f32[4] all-gather(x), replica_groups={{1,0}}, dimensions={0}"));
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 11, 0, 10}));  // group order 1, 0
  out = RunAll(CollectiveModule(
      "replica_count=2", "replica-id()",
      "ROOT s = f32[1] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=add"));
  EXPECT_EQ(Floats(out[0]), std::vector<float>{1});
  EXPECT_EQ(Floats(out[1]), std::vector<float>{21});
  out = RunAll(
      CollectiveModule("replica_count=2", "replica-id()",
                       "ROOT t = f32[2] all-to-all(x), replica_groups={{0,1}}, dimensions={0}"));
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{0, 1}));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{10, 11}));
  out = RunAll(CollectiveModule("replica_count=2", "replica-id()",
                                "y = f32[2] negate(x)\n  ROOT t = (f32[2], f32[2]) all-to-all(x, "
                                "y), replica_groups={{0,1}}"));
  // tuple form: element j of device i's result is device j's operand i.
  EXPECT_EQ(Floats(out[1].elements[0]), (std::vector<float>{-0, -10}));
  EXPECT_EQ(Floats(out[1].elements[1]), (std::vector<float>{-1, -11}));
}

TEST(HloEvalCollectives, CollectivePermuteAndBroadcast) {
  std::vector<Value> out = RunAll(
      CollectiveModule("replica_count=3", "replica-id()",
                       "ROOT p = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,2}}"));
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{0, 0}));  // nobody sends to 0: zeros
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{0, 10}));
  EXPECT_EQ(Floats(out[2]), (std::vector<float>{1, 11}));
  out = RunAll(
      CollectiveModule("replica_count=3", "replica-id()",
                       "ROOT bc = f32[2] collective-broadcast(x), replica_groups={{2,0,1}}"));
  for (const Value& v : out) EXPECT_EQ(Floats(v), (std::vector<float>{2, 12}));
}

TEST(HloEvalCollectives, PartitionModes) {
  // SPMD: 2 replicas x 2 partitions. With channel_id and global ids, groups list device ids.
  std::vector<Value> out = RunAll(
      CollectiveModule("replica_count=2, num_partitions=2", "partition-id()",
                       "ROOT r = f32[2] all-reduce(x), channel_id=1, replica_groups={{0,1,2,3}}, "
                       "use_global_device_ids=true, to_apply=add"));
  ASSERT_EQ(out.size(), 4u);
  for (const Value& v : out) EXPECT_EQ(Floats(v), (std::vector<float>{2, 42}));
  // Cross-partition permute (channel_id, no global ids): partitions swap inside each replica.
  out = RunAll(CollectiveModule(
      "replica_count=2, num_partitions=2", "partition-id()",
      "ROOT p = f32[2] collective-permute(x), channel_id=2, source_target_pairs={{0,1},{1,0}}"));
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 11}));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{0, 10}));
  EXPECT_EQ(Floats(out[2]), (std::vector<float>{1, 11}));
  // Cross-replica (no channel_id): partition 1 of both replicas reduce together.
  out = RunAll(
      CollectiveModule("replica_count=2, num_partitions=2", "replica-id()",
                       "ROOT r = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=add"));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{1, 21}));
}

TEST(HloEvalCollectives, AsyncStartDoneForms) {
  std::vector<Value> out =
      RunAll(CollectiveModule("replica_count=2", "replica-id()",
                              "s = f32[2] all-reduce-start(x), replica_groups={}, to_apply=add\n"
                              "  ROOT d = f32[2] all-reduce-done(s)"));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{1, 21}));
  out = RunAll(CollectiveModule("replica_count=2", "replica-id()",
                                "s = (f32[2], f32[2], u32[], u32[]) collective-permute-start(x), "
                                "source_target_pairs={{0,1},{1,0}}\n"
                                "  ROOT d = f32[2] collective-permute-done(s)"));
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 11}));
}

TEST(HloEvalCollectives, DivergedDevicesAreAnError) {
  // Only replica 0 takes the branch with the all-reduce: on a TPU the others would never join.
  const std::string text = R"(HloModule m, replica_count=2
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
reduce { x = f32[] parameter(0)
  ROOT r = f32[] all-reduce(x), replica_groups={}, to_apply=add }
keep { y = f32[] parameter(0)
  ROOT c = f32[] copy(y) }
ENTRY e {
  id = u32[] replica-id()
  zero = u32[] constant(0)
  p = pred[] compare(id, zero), direction=EQ
  v = f32[] constant(1)
  ROOT r = f32[] conditional(p, v, v), true_computation=reduce, false_computation=keep
})";
  Result<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok());
  Result<EvalResult> r = Evaluate(*m, {{}, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("%r (all-reduce, line 6): device 1 of the group did not reach this "
                        "collective with device 0 (the devices took different paths)"));
}

TEST(HloEvalCollectives, ResultShapesMustMatchTheGroupSize) {
  // f32[2] gathered over a group of 3 is f32[6], not the f32[4] the text claims.
  const std::string text =
      CollectiveModule("replica_count=3", "replica-id()",
                       "ROOT g = f32[4] all-gather(x), replica_groups={}, dimensions={0}");
  Result<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok());
  Result<EvalResult> r = Evaluate(*m, {{}, {}, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(
      r.status().message(),
      HasSubstr("over its replica group this gives f32[6], but the result shape says f32[4]"));
}

TEST(HloEvalCollectives, GroupIdsMustExist) {
  const std::string text =
      CollectiveModule("replica_count=2", "replica-id()",
                       "ROOT r = f32[2] all-reduce(x), replica_groups={{0,5}}, to_apply=add");
  Result<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok());
  Result<EvalResult> r = Evaluate(*m, {{}, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("replica group id 5 does not exist"));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
