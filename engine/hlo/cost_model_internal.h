// Pieces of the cost model (cost_model.h): per-instruction compute (cost_compute.cpp), the
// fusion rule and HBM traffic (cost_traffic.cpp), while trip counts (trip_count.cpp) and the HBM
// peak (memory_profile.cpp). Internal to engine/hlo.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/chip/chip_model.h"
#include "engine/hlo/cost_model.h"

namespace tpuemu::engine::hlo::internal {

struct PriceContext {
  const Module& module;
  const ChipSpec& spec;
  const AcceleratorType& type;  // the slice's: its torus for collectives
  int tensorcores;              // per device (CostOptions::tensorcores when given)
  const CostOptions& options;
};

struct ComputeCost {
  std::string unit = "vpu";  // mxu | vpu | ici | none
  int64_t compute_cycles = 0;
  int64_t collective_cycles = 0;
  double flops = 0;
  double mxu_flops = 0;
  int passes = 0;
  int64_t folds = 0;
  SplitKind split = SplitKind::kNone;
  // dot/convolution (or a fusion with exactly one): the GEMM the MXUs run, gemm_batch of them.
  int64_t gemm_batch = 1;
  GemmShape gemm;
  bool supported = true;
  bool free = false;  // no work at all (parameter, tuple, get-tuple-element, bitcast, ...)
};

// Compute of one instruction on one device; a fusion sums its body.
ComputeCost PriceCompute(const PriceContext& ctx, const Computation& comp, const Instruction& inst);
bool IsFree(Opcode opcode);
bool IsControlFlow(Opcode opcode);  // while, conditional, call, async-start with calls

// For a module without fusions: fused[i] is true when instruction i is an elementwise producer
// whose users all fuse with it (its result never reaches HBM). All false in a module with
// fusions (XLA already decided).
std::vector<bool> FusedProducers(const Module& module, const Computation& comp);
// HBM bytes instruction `index` reads and writes under the fusion decision `fused`.
double Traffic(const Computation& comp, int index, const std::vector<bool>& fused);

// Trip count of a while loop instruction of `caller` (known_trip_count, else the
// induction-variable pattern); -1 when unknown.
int64_t TripCount(const Module& module, const Computation& caller, const Instruction& loop);

// Where a computation's peak is reached: the instruction, and the results live there (largest
// first).
struct PeakAt {
  int instruction = 0;
  std::vector<int> live;
};

// Peak bytes live at once while computation `index` runs (its parameters included); `at`, when
// given, is filled for this computation.
int64_t PeakBytes(const Module& module, int index, std::vector<int64_t>& memo,
                  PeakAt* at = nullptr);

}  // namespace tpuemu::engine::hlo::internal
