// One StepProfile on one accelerator type with one sharding plan: step time, throughput, MFU,
// HBM per chip against capacity, the bottleneck and the dollars. The model (docs/cost-model.md):
//
//  * Sharding. The chips form `replicas` = chips / tp data-parallel replicas, each a
//    tensor-parallel group of `tp` chips. A replica takes ⌈globalBatch / replicas⌉ items (padding
//    is paid for). dp keeps a full copy of the model state per replica (split over tp), fsdp and
//    tp shard it over every chip and all-gather each layer's bf16 weights before its forward and
//    its backward pass, reduce-scattering the gradients; dp all-reduces the gradients.
//  * Time per op and chip is a roofline: max(MXU, vector unit, HBM) for its per-chip share. MXU
//    time of a GEMM comes from the fold model (engine/chip/timing.h DotCost on the per-chip GEMM,
//    the chip's TensorCores) divided by Efficiency::mxu; vector time is element-ops at
//    8x128 lanes per TensorCore per cycle; HBM time is bytes at Efficiency::hbm of the bandwidth.
//  * Collectives use the slice's ICI topology (ici.h). FSDP and dp collectives of a layer overlap
//    that layer's compute (XLA's async collectives), and so does Efficiency::tp_overlap (fitted)
//    of its tensor-parallel all-reduces: a layer takes max(compute, collectives + that share),
//    and the rest of the tensor-parallel all-reduces adds.
//  * Host offloading. A remat policy's offloaded tensors go to the host in the forward pass and
//    come back in the backward pass over the chip's host link (host_link.h, at Efficiency::host),
//    overlapped with the layer's compute like its collectives: a layer takes
//    max(compute, collectives, host transfers). Optimizer-state offload (MaxText's
//    optimizer_memory_host_offload) keeps Adam's moments in host memory and moves them in and out
//    once per step, not overlapped.
//  * Gradient accumulation (MaxText's gradient_accumulation_steps): `microbatches` passes of
//    1/microbatches of the replica's batch each, activations sized for one; every pass repeats
//    the layers' collectives.
//  * Context parallelism (`cp` > 1, with fsdp): groups of cp chips share each sequence, a chunk
//    each (MaxText's ici_context_parallelism), so the global batch needs only chips/cp
//    sequences — per_device_batch_size below 1. Each layer all-gathers its K and V over the
//    group (forward, recompute) and reduce-scatters their gradients, on the critical path.
//  * Expert parallelism (MoE, `ep` > 1, with fsdp): the experts are split over groups of ep
//    chips; each layer sends its routed tokens to their experts' chips and back (an all-to-all
//    over the group, on the critical path), and only the rest of the layer is all-gathered.
//  * Memory per chip: weights, gradients and optimizer state (sharded as above), FSDP's two
//    gathered layers, the activations kept for the backward pass and the transient working set,
//    against Efficiency::usable_hbm of the chip's HBM; offloaded bytes are reported as host
//    memory per chip. When the kept activations overflow, XLA's rematerialisation pass recomputes
//    as many of them as the overflow (never the layer inputs) and the step pays for re-running
//    the matmuls that produced them, in proportion.
// Pure function of its arguments: thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/chip/efficiency.h"
#include "engine/cost/price_table.h"
#include "engine/cost/step_profile.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {

enum class Strategy { kDataParallel, kFsdp, kTensorParallel };
std::string_view StrategyName(Strategy strategy);  // "dp", "fsdp", "tp"
Result<Strategy> ParseStrategy(std::string_view name);

struct Plan {
  Strategy strategy = Strategy::kFsdp;
  int tp = 1;                      // tensor-parallel degree; 1 unless strategy is kTensorParallel
  int ep = 1;                      // expert-parallel degree (MoE with fsdp)
  int microbatches = 1;            // gradient accumulation steps
  bool offload_optimizer = false;  // Adam's moments in host memory
  int cp = 1;                      // context-parallel degree (with fsdp)
};

struct MemoryPerChip {  // bytes
  double weights = 0, gradients = 0, optimizer = 0;
  double activations = 0;  // kept for the backward pass
  double working = 0;      // FSDP's gathered layers and the transient working set
  double total = 0;
  double capacity = 0;        // usable HBM per chip
  double host = 0;            // offloaded to host memory at the peak (activations, optimizer state)
  double rematerialized = 0;  // kept activations XLA recomputes instead, to fit (not in total)
};

struct Money {  // USD
  double per_step = 0, per_hour = 0, per_million_units = 0;
};

struct Estimate {
  std::string accelerator_type;
  Generation generation = Generation::kV4;
  int chips = 0;
  Plan plan;
  std::string remat;              // the profile's
  bool feasible = false;          // the plan can run at all (batch splits, tp divides)
  bool fits = false;              // feasible and the memory fits
  std::string problem;            // why not, for a reader: "does not fit: ..."
  int replicas = 0;               // chips / tp
  int64_t batch_per_replica = 0;  // sequences per data-parallel group (of cp replicas)
  double step_seconds = 0;
  double units_per_second = 0, units_per_second_per_chip = 0;
  double mfu = 0;
  MemoryPerChip memory;
  // Step time by what bounds it: each op's time goes to its roofline's limit; ici is the
  // collective time compute does not hide.
  double mxu_seconds = 0, hbm_seconds = 0, vector_seconds = 0, ici_seconds = 0;
  double host_seconds = 0;           // host-link time compute does not hide
  double collective_seconds = 0;     // all collective time, hidden or not
  double host_transfer_seconds = 0;  // all host-link time, hidden or not
  std::string bottleneck;            // "MXU", "HBM bandwidth", "vector", "ICI", "host link"
  Money on_demand, spot;
};

Estimate EstimatePlan(const StepProfile& profile, const AcceleratorType& type, Plan plan,
                      const PriceTable& prices, const Efficiency& eff = kDefaultEfficiency);

}  // namespace tpuemu::engine::cost
