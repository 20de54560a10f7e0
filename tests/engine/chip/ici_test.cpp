#include "engine/chip/ici.h"

#include <gtest/gtest.h>

namespace tpuemu::engine::cost {
namespace {

SliceMesh Mesh(const char* type, int tp) {
  Result<SliceMesh> m = MeshFor(FindAcceleratorType(type).value(), tp);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

TEST(Ici, AxesAndWraparound) {
  // v5e/v6e wrap only at the full 16; v4/v5p slices of whole cubes (>= 64 chips) on every axis.
  const SliceMesh pod = Mesh("v5litepod-256", 1);
  ASSERT_EQ(pod.all.axes.size(), 2u);
  EXPECT_TRUE(pod.all.axes[0].wraps && pod.all.axes[1].wraps);
  const SliceMesh half = Mesh("v6e-128", 1);  // 8x16
  EXPECT_FALSE(half.all.axes[0].wraps);
  EXPECT_TRUE(half.all.axes[1].wraps);
  EXPECT_FALSE(Mesh("v4-32", 1).all.axes[2].wraps);  // 2x2x4: 16 chips
  const SliceMesh cube = Mesh("v5p-128", 1);         // 4x4x4
  EXPECT_EQ(cube.all.Chips(), 64);
  EXPECT_TRUE(cube.all.axes[0].wraps && cube.all.axes[2].wraps);
}

TEST(Ici, TensorParallelGroupTakesTheLeadingAxes) {
  const SliceMesh m = Mesh("v5litepod-256", 4);  // 16x16 -> tp 4x1, replicas 4x16
  EXPECT_EQ(m.tp.Chips(), 4);
  EXPECT_EQ(m.tp.axes[0].size, 4);
  EXPECT_FALSE(m.tp.axes[0].wraps);
  EXPECT_EQ(m.replicas.Chips(), 64);
  EXPECT_TRUE(m.replicas.axes[1].wraps);
  EXPECT_FALSE(m.replicas.axes[0].wraps);  // strided: no ring of its own
  EXPECT_FALSE(MeshFor(FindAcceleratorType("v5litepod-16").value(), 3).ok());
}

TEST(Ici, CollectiveTimes) {
  const ChipSpec& v5e = Spec(Generation::kV5e);
  const Efficiency& eff = kDefaultEfficiency;
  // 16x16 torus: 255/256 of the bytes over 2 axes x 2 links x 50 GB/s x 0.85, 30 ring steps.
  const IciGroup pod = Mesh("v5litepod-256", 1).all;
  const double bytes = 1e9;
  const double gather = bytes * 255 / 256 / (4 * 50e9 * 0.85) + 30 * eff.ici_hop_seconds;
  EXPECT_NEAR(AllGatherSeconds(v5e, pod, bytes), gather, 1e-12);
  EXPECT_NEAR(ReduceScatterSeconds(v5e, pod, bytes), gather, 1e-12);
  EXPECT_NEAR(AllReduceSeconds(v5e, pod, bytes), 2 * gather, 1e-12);
  EXPECT_EQ(AllGatherSeconds(v5e, Mesh("v5litepod-1", 1).all, bytes), 0);
  // All-to-all: a chunk travels n/4 hops on average, so bytes·n/4 as an all-gather moves them.
  const IciGroup ring = Mesh("v5litepod-256", 16).tp;  // one full, wrapping 16-chip axis
  EXPECT_NEAR(AllToAllSeconds(v5e, ring, bytes), AllGatherSeconds(v5e, ring, bytes * 16 / 4),
              1e-12);
  EXPECT_EQ(AllToAllSeconds(v5e, Mesh("v5litepod-1", 1).all, bytes), 0);
}

}  // namespace
}  // namespace tpuemu::engine::cost
