// Every column of an estimate, on cases small enough to work by hand (the arithmetic is in the
// comments), and the three ways a plan can fail: the model does not fit, the slice is too small
// for the batch, the batch is too small for the slice.
#include "engine/cost/estimate.h"

#include <gtest/gtest.h>

namespace tpuemu::engine::cost {
namespace {

// v5e: derived peak 4 MXUs x 128² x 2 x 1.5 GHz = 196.608 TFLOPS, published 197; HBM 819 GB/s,
// 16 GiB; $1.20 per chip-hour on demand, $0.48 spot (price_table.cpp).
StepProfile HandProfile() {
  const Efficiency& eff = kDefaultEfficiency;
  StepProfile p;
  p.name = "hand";
  p.unit = "samples";
  p.units_per_step = 1000;
  p.global_batch = 10;
  p.model_flops = 98.5e12;  // half of v5e's published peak for one second
  p.other = {1 * kGiB, 1 * kGiB, 2 * kGiB, 0.5 * kGiB};
  p.activation_bytes = 2 * kGiB;
  // 1 s on the MXUs of one chip, 0.5 s of HBM traffic.
  p.ops.push_back({.name = "matmul", .unit = OpUnit::kMxu, .mxu_flops = 196.608e12 * eff.mxu});
  p.ops.push_back({.name = "stream", .unit = OpUnit::kVector, .hbm_bytes = 819e9 * eff.hbm * 0.5});
  return p;
}

Estimate EstimateOn(const StepProfile& p, const char* type, Plan plan) {
  return EstimatePlan(p, FindAcceleratorType(type).value(), plan, PriceTable::Default());
}

TEST(Estimate, EveryColumnOnOneChip) {
  const Estimate e = EstimateOn(HandProfile(), "v5litepod-1", {Strategy::kDataParallel, 1});
  ASSERT_TRUE(e.feasible) << e.problem;
  EXPECT_TRUE(e.fits);
  EXPECT_EQ(e.problem, "");
  EXPECT_EQ(e.replicas, 1);
  EXPECT_EQ(e.batch_per_replica, 10);
  EXPECT_NEAR(e.mxu_seconds, 1.0, 1e-9);
  EXPECT_NEAR(e.hbm_seconds, 0.5, 1e-9);
  EXPECT_NEAR(e.step_seconds, 1.5, 1e-9);
  EXPECT_EQ(e.bottleneck, "MXU");
  EXPECT_NEAR(e.units_per_second, 1000 / 1.5, 1e-6);
  EXPECT_NEAR(e.units_per_second_per_chip, 1000 / 1.5, 1e-6);
  EXPECT_NEAR(e.mfu, 98.5e12 / (1.5 * 197e12), 1e-9);  // = 1/3
  // Memory: 1 + 1 + 2 GiB of state, 2 GiB of activations; 95% of 16 GiB usable.
  EXPECT_DOUBLE_EQ(e.memory.weights, 1 * kGiB);
  EXPECT_DOUBLE_EQ(e.memory.gradients, 1 * kGiB);
  EXPECT_DOUBLE_EQ(e.memory.optimizer, 2 * kGiB);
  EXPECT_DOUBLE_EQ(e.memory.activations, 2 * kGiB);
  EXPECT_DOUBLE_EQ(e.memory.total, 6 * kGiB);
  EXPECT_DOUBLE_EQ(e.memory.capacity, 16 * kGiB * 0.95);
  // $1.20/h x 1 chip; 1.5 s = $0.0005 a step; 1000 samples a step = $0.50 per million.
  EXPECT_NEAR(e.on_demand.per_hour, 1.20, 1e-12);
  EXPECT_NEAR(e.on_demand.per_step, 0.0005, 1e-12);
  EXPECT_NEAR(e.on_demand.per_million_units, 0.5, 1e-9);
  EXPECT_NEAR(e.spot.per_hour, 0.48, 1e-12);
  EXPECT_NEAR(e.spot.per_million_units, 0.2, 1e-9);
}

TEST(Estimate, DataParallelSplitsTheBatchAndAllReducesGradients) {
  // v5litepod-4: 2x2, no wraparound. 4 replicas take ⌈10/4⌉ = 3 samples: 30% of the work.
  const Estimate e = EstimateOn(HandProfile(), "v5litepod-4", {Strategy::kDataParallel, 1});
  ASSERT_TRUE(e.feasible) << e.problem;
  EXPECT_EQ(e.batch_per_replica, 3);
  EXPECT_NEAR(e.mxu_seconds, 0.3, 1e-9);
  EXPECT_NEAR(e.hbm_seconds, 0.15, 1e-9);
  // All-reduce of 1 GiB of gradients = 2 x (1 GiB x 3/4 over 2 axes x 1 link x 50 GB/s x 0.85
  // + 2 ring steps x 2 µs) = 2 x (0.0094742 + 0.000004) s, hidden behind 0.45 s of compute.
  EXPECT_NEAR(e.collective_seconds, 2 * (kGiB * 0.75 / (2 * 50e9 * 0.85) + 4e-6), 1e-9);
  EXPECT_NEAR(e.ici_seconds, 0, 1e-12);
  EXPECT_NEAR(e.step_seconds, 0.45, 1e-9);
  EXPECT_NEAR(e.mfu, 98.5e12 / (0.45 * 4 * 197e12), 1e-9);
  // dp keeps a full copy of the state per chip; activations are the replica's 30%.
  EXPECT_DOUBLE_EQ(e.memory.weights, 1 * kGiB);
  EXPECT_NEAR(e.memory.activations, 0.6 * kGiB, 1);
  EXPECT_NEAR(e.on_demand.per_hour, 4.80, 1e-12);
}

TEST(Estimate, FsdpShardsTheStateAndGathersTheWeights) {
  const Estimate e = EstimateOn(HandProfile(), "v5litepod-4", {Strategy::kFsdp, 1});
  ASSERT_TRUE(e.feasible) << e.problem;
  EXPECT_DOUBLE_EQ(e.memory.weights, 0.25 * kGiB);
  EXPECT_DOUBLE_EQ(e.memory.gradients, 0.25 * kGiB);
  EXPECT_DOUBLE_EQ(e.memory.optimizer, 0.5 * kGiB);
  EXPECT_DOUBLE_EQ(e.memory.working, 0.5 * kGiB);  // the gathered copy of the whole program
  // Two all-gathers of 0.5 GiB and a reduce-scatter of 1 GiB.
  const double gather = 0.5 * kGiB * 0.75 / (2 * 50e9 * 0.85) + 4e-6;
  const double scatter = kGiB * 0.75 / (2 * 50e9 * 0.85) + 4e-6;
  EXPECT_NEAR(e.collective_seconds, 2 * gather + scatter, 1e-9);
}

TEST(Estimate, AModelThatDoesNotFitSaysSo) {
  StepProfile p = HandProfile();
  p.other.weights = 20 * kGiB;
  const Estimate e = EstimateOn(p, "v5litepod-1", {Strategy::kDataParallel, 1});
  EXPECT_TRUE(e.feasible);
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.problem,
            "does not fit: weights, gradients and optimizer state need 23.0 GiB per chip, "
            "15.2 GiB usable");
}

TEST(Estimate, ASliceTooSmallForTheBatchSaysSo) {
  StepProfile p = HandProfile();
  p.activation_bytes = 40 * kGiB;
  const Estimate e = EstimateOn(p, "v5litepod-1", {Strategy::kDataParallel, 1});
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.problem,
            "slice too small for the batch: activations need 40.0 GiB per chip beside 4.0 GiB "
            "of state, 15.2 GiB usable");
  // Eight chips hold a replica's eighth of them (⌈10/8⌉ = 2 samples: 8 GiB) and fit.
  EXPECT_TRUE(EstimateOn(p, "v5litepod-8", {Strategy::kFsdp, 1}).fits);
}

TEST(Estimate, ABatchSmallerThanTheReplicasSaysSo) {
  StepProfile p = HandProfile();
  p.global_batch = 2;
  const Estimate e = EstimateOn(p, "v5litepod-4", {Strategy::kFsdp, 1});
  EXPECT_FALSE(e.feasible);
  EXPECT_EQ(e.problem,
            "slice too large for the batch: the global batch of 2 cannot be split over 4 "
            "data-parallel replicas");
}

TEST(Estimate, TensorParallelismNeedsAModelItDivides) {
  const Estimate program = EstimateOn(HandProfile(), "v5litepod-4", {Strategy::kTensorParallel, 2});
  EXPECT_FALSE(program.feasible);
  EXPECT_EQ(program.problem, "tensor parallelism applies to model shapes only");
  StepProfile p = HandProfile();
  p.max_tp = 6;
  EXPECT_EQ(EstimateOn(p, "v5litepod-4", {Strategy::kTensorParallel, 4}).problem,
            "tensor parallelism 4 does not divide the model's 6 heads");
}

TEST(Estimate, TensorParallelAllReducesAddToTheStep) {
  StepProfile p = HandProfile();
  p.max_tp = 8;
  p.layers = 1;
  p.tp_allreduce_bytes_per_layer = kGiB;
  // tp 4 on v5litepod-4: one replica of all 10 samples; the op splits over the 4 chips only when
  // it is tp_split, so the MXU op stays 1 s; the all-reduce of 1 GiB adds.
  p.ops[0].tp_split = true;
  const Estimate e = EstimateOn(p, "v5litepod-4", {Strategy::kTensorParallel, 4});
  ASSERT_TRUE(e.feasible) << e.problem;
  const double all_reduce = 2 * (kGiB * 0.75 / (2 * 50e9 * 0.85) + 4e-6);
  EXPECT_NEAR(e.mxu_seconds, 0.25, 1e-9);
  EXPECT_NEAR(e.ici_seconds, all_reduce, 1e-9);
  EXPECT_NEAR(e.step_seconds, 0.25 + 0.5 + all_reduce, 1e-9);
}

TEST(Estimate, HostOffloadOverlapsTheLayerAndShowsWhenItDoesNot) {
  StepProfile p = HandProfile();
  p.layers = 1;
  p.ops[0].per_layer = true;  // 1 s of MXU work in the layer; 0.5 s of streaming outside it
  // One layer offloads 6 GB: out and back over v5e's 15 GB/s host link at 85% = 0.94 s, hidden
  // behind the layer's 1 s of compute.
  p.host_offload_bytes_per_layer = 6e9;
  const Estimate hidden = EstimateOn(p, "v5litepod-1", {Strategy::kFsdp, 1});
  const double host = 2 * 6e9 / (1.5e10 * 0.85);
  EXPECT_NEAR(hidden.host_transfer_seconds, host, 1e-9);
  EXPECT_NEAR(hidden.step_seconds, 1.5, 1e-9);
  EXPECT_EQ(hidden.host_seconds, 0);
  EXPECT_NEAR(hidden.memory.host, 6e9, 1);
  // Four times as much no longer hides: the layer is the transfer, and the host link the bound.
  p.host_offload_bytes_per_layer = 24e9;
  const Estimate exposed = EstimateOn(p, "v5litepod-1", {Strategy::kFsdp, 1});
  EXPECT_NEAR(exposed.step_seconds, 4 * host + 0.5, 1e-9);
  EXPECT_NEAR(exposed.host_seconds, 4 * host - 1.0, 1e-9);
  EXPECT_EQ(exposed.bottleneck, "host link");
}

TEST(Estimate, OptimizerOffloadAndGradientAccumulation) {
  StepProfile p = HandProfile();
  // Adam's 2 GiB of moments go to the host and cross v5e's link twice a step, not overlapped.
  const Estimate off = EstimateOn(p, "v5litepod-1", {Strategy::kFsdp, 1, 1, 1, true});
  EXPECT_EQ(off.memory.optimizer, 0);
  EXPECT_NEAR(off.memory.host, 2 * kGiB, 1);
  EXPECT_NEAR(off.step_seconds, 1.0 + 0.5 + 2 * 2 * kGiB / (1.5e10 * 0.85), 1e-9);
  // Two microbatches: activations halve, the compute stays.
  const Estimate ga = EstimateOn(p, "v5litepod-1", {Strategy::kFsdp, 1, 1, 2, false});
  EXPECT_NEAR(ga.memory.activations, kGiB, 1);
  EXPECT_NEAR(ga.step_seconds, 1.5, 1e-9);
  // More microbatches than samples per replica cannot run.
  const Estimate many = EstimateOn(p, "v5litepod-1", {Strategy::kFsdp, 1, 1, 11, false});
  EXPECT_FALSE(many.feasible);
  EXPECT_NE(many.problem.find("gradient accumulation"), std::string::npos) << many.problem;
}

TEST(Estimate, XlaRecomputesWhatOverflowsAtTheCostOfItsMatmuls) {
  StepProfile p = HandProfile();
  // 4 GiB of state, 2 GiB kept beside; 14 GiB more kept, of which 12 GiB XLA may recompute by
  // re-running 98.5 TFLOP of forward matmuls (0.5 s of MXU at the calibrated efficiency).
  p.layers = 1;
  p.activation_bytes_tp = 14 * kGiB;
  p.reducible_activation_bytes_tp = 12 * kGiB;
  p.reducible_flops_per_layer = 196.608e12 * kDefaultEfficiency.mxu / 2;
  const Estimate e = EstimateOn(p, "v5litepod-1", {Strategy::kFsdp, 1});
  // 4 + 2 + 14 = 20 GiB against 15.2 usable: XLA recomputes the 4.8 GiB overflow, 40% of what it
  // may, so the step pays 40% of 0.5 s.
  const double overflow = 20 * kGiB - e.memory.capacity;
  EXPECT_TRUE(e.fits) << e.problem;
  EXPECT_NEAR(e.memory.rematerialized, overflow, 1);
  EXPECT_NEAR(e.memory.total, e.memory.capacity, 1);
  EXPECT_NEAR(e.step_seconds, 1.5 + overflow / (12 * kGiB) * 0.5, 1e-9);
  // More overflow than XLA can recompute: does not fit.
  p.reducible_activation_bytes_tp = 2 * kGiB;
  const Estimate no = EstimateOn(p, "v5litepod-1", {Strategy::kFsdp, 1});
  EXPECT_FALSE(no.fits);
  EXPECT_EQ(no.memory.rematerialized, 0);
}

}  // namespace
}  // namespace tpuemu::engine::cost
