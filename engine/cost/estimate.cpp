#include "engine/cost/estimate.h"

#include <algorithm>
#include <cmath>

#include "engine/chip/chip_model.h"
#include "engine/chip/ici.h"
#include "engine/cost/number_text.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {
namespace {

int64_t Shrink(int64_t dim, double factor) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(dim) * factor)));
}

// The per-chip GEMM: the batch dimension scaled by the replica's share, the tp dimension split.
void ShardGemm(const ProfileOp& op, double batch_share, int tp, int64_t* gemm_batch, GemmShape* g) {
  *gemm_batch = op.gemm_batch;
  *g = op.gemm;
  auto apply = [&](GemmDim dim, double factor) {
    switch (dim) {
      case GemmDim::kBatch:
        *gemm_batch = Shrink(*gemm_batch, factor);
        break;
      case GemmDim::kM:
        g->m = Shrink(g->m, factor);
        break;
      case GemmDim::kN:
        g->n = Shrink(g->n, factor);
        break;
      case GemmDim::kK:
        g->k = Shrink(g->k, factor);
        break;
      case GemmDim::kNone:
        break;
    }
  };
  if (op.scaling == Scaling::kBatch) apply(op.batch_dim, batch_share);
  if (op.tp_split) apply(op.tp_dim, 1.0 / tp);
}

// Time of one op's per-chip share, and which unit bounds it.
struct OpTime {
  double seconds = 0;
  enum { kMxu, kHbm, kVector } bound = kMxu;
};

// The op's per-chip share priced by the one chip model (engine/chip/chip_model.h), as the HLO
// cost model prices an instruction: an op of an HLO module on one chip at share 1 costs the
// cycles of its row in the module's job (tests/engine/cost/one_chip_model_test.cpp).
OpTime TimeOp(const ProfileOp& op, const ChipSpec& spec, double share, double batch_share, int tp,
              const Efficiency& eff) {
  const int tc = spec.tensorcores_per_chip;
  ChipCycles c;
  if (op.unit != OpUnit::kVector && op.gemm.m > 0 && op.gemm.n > 0 && op.gemm.k > 0) {
    int64_t gemm_batch = 1;
    GemmShape g;
    ShardGemm(op, batch_share, tp, &gemm_batch, &g);
    const OpCost dot = DotCost(spec, gemm_batch, g, op.passes, 2, tc, TimingMode::kTpu);
    // A GEMM op is its GEMM; an attention kernel's GEMMs all run at the efficiency of the one
    // it names (transformer_model.cpp), so its cycles scale to its FLOPs.
    const double scale =
        op.unit == OpUnit::kAttention && dot.flops > 0 ? op.mxu_flops * share / dot.flops : 1.0;
    c.mxu =
        MxuCycles(static_cast<int64_t>(std::ceil(static_cast<double>(dot.compute_cycles) * scale)),
                  TimingMode::kTpu, eff);
  } else if (op.mxu_flops > 0) {
    c.mxu = static_cast<int64_t>(
        std::ceil(op.mxu_flops * share / (spec.PeakBf16Flops() * eff.mxu) * spec.clock_hz));
  }
  c.vector = VectorCycles(op.vpu_ops * share, tc);
  c.memory = HbmCycles(spec, op.hbm_bytes * share, tc, eff);
  if (op.unit == OpUnit::kAttention) {  // flash attention: the MXUs and the VPU overlap
    c.mxu = std::max(c.mxu, c.vector);
    c.vector = 0;
  }
  OpTime t;
  t.seconds = static_cast<double>(c.Total()) / spec.clock_hz;
  t.bound = c.memory > c.Compute() ? OpTime::kHbm
            : c.vector > c.mxu     ? OpTime::kVector
                                   : OpTime::kMxu;
  return t;
}

// Collective seconds per step for one block of state (a layer, or the rest of the model).
double StateCollectives(const StepProfile& p, const StateBytes& s, Strategy strategy, int tp,
                        const ChipSpec& spec, const IciGroup& replicas, const Efficiency& eff) {
  if (strategy == Strategy::kDataParallel) {
    return p.training ? AllReduceSeconds(spec, replicas, s.gradients / tp, eff) : 0;
  }
  double t = 2 * AllGatherSeconds(spec, replicas, s.gathered / tp, eff);
  if (p.training) t += ReduceScatterSeconds(spec, replicas, s.gradients / tp, eff);
  return t;
}

Estimate Infeasible(Estimate e, std::string why) {
  e.feasible = false;
  e.problem = std::move(why);
  return e;
}

}  // namespace

std::string_view StrategyName(Strategy strategy) {
  switch (strategy) {
    case Strategy::kDataParallel:
      return "dp";
    case Strategy::kFsdp:
      return "fsdp";
    case Strategy::kTensorParallel:
      return "tp";
  }
  return "dp";
}

Result<Strategy> ParseStrategy(std::string_view name) {
  for (Strategy s : {Strategy::kDataParallel, Strategy::kFsdp, Strategy::kTensorParallel}) {
    if (name == StrategyName(s)) return s;
  }
  return Status::InvalidArgument("unknown strategy '" + std::string(name) +
                                 "' (expected auto, dp, fsdp or tp)");
}

Estimate EstimatePlan(const StepProfile& p, const AcceleratorType& type, Plan plan,
                      const PriceTable& prices, const Efficiency& eff) {
  const ChipSpec& spec = Spec(type.generation);
  Estimate e;
  e.accelerator_type = type.name;
  e.generation = type.generation;
  e.chips = type.chips;
  e.plan = plan;
  e.remat = p.remat;
  const int tp = std::max(plan.tp, 1);
  if (tp > 1 && plan.strategy != Strategy::kTensorParallel) {
    return Infeasible(e, "a tensor-parallel degree needs the tp strategy");
  }
  if (tp > 1 && (p.max_tp < tp || p.max_tp % tp != 0)) {
    return Infeasible(e, p.max_tp <= 1 ? "tensor parallelism applies to model shapes only"
                                       : "tensor parallelism " + std::to_string(tp) +
                                             " does not divide the model's " +
                                             std::to_string(p.max_tp) + " heads");
  }
  const int ep = std::max(plan.ep, 1);
  const int micro = std::max(plan.microbatches, 1);
  if (ep > 1 && (p.max_ep % ep != 0 || plan.strategy != Strategy::kFsdp)) {
    return Infeasible(e, p.max_ep <= 1 ? "expert parallelism applies to mixture-of-experts models"
                         : plan.strategy != Strategy::kFsdp
                             ? "expert parallelism is modelled with the fsdp strategy only"
                             : "expert parallelism " + std::to_string(ep) +
                                   " does not divide the model's " + std::to_string(p.max_ep) +
                                   " experts");
  }
  const int cp = std::max(plan.cp, 1);
  if (cp > 1 && (p.max_cp % cp != 0 || plan.strategy != Strategy::kFsdp || ep > 1)) {
    return Infeasible(e, p.max_cp <= 1 ? "context parallelism applies to model shapes only"
                         : plan.strategy != Strategy::kFsdp || ep > 1
                             ? "context parallelism is modelled with fsdp alone"
                             : "context parallelism " + std::to_string(cp) +
                                   " does not divide the sequence of " + std::to_string(p.max_cp));
  }
  Result<SliceMesh> context_mesh = MeshFor(type, cp);  // its "tp" group shares a sequence
  if (!context_mesh.ok()) return Infeasible(e, "cp: " + context_mesh.status().message());
  Result<SliceMesh> mesh = MeshFor(type, tp);
  if (!mesh.ok()) return Infeasible(e, mesh.status().message());
  Result<SliceMesh> expert_mesh = MeshFor(type, ep);  // its "tp" group is the expert group
  if (!expert_mesh.ok()) return Infeasible(e, "ep: " + expert_mesh.status().message());
  e.replicas = type.chips / tp;
  const int groups = std::max(e.replicas / cp, 1);  // data-parallel groups
  if (p.global_batch < groups) {
    return Infeasible(
        e, "slice too large for the batch: the global batch of " + std::to_string(p.global_batch) +
               " cannot be split over " + std::to_string(groups) + " data-parallel replicas" +
               (cp == 1 && p.max_cp > 1 ? " (context parallelism splits sequences)" : ""));
  }
  e.batch_per_replica = (p.global_batch + groups - 1) / groups;
  if (e.batch_per_replica < micro) {
    return Infeasible(e, "gradient accumulation: " + std::to_string(micro) +
                             " microbatches need at least as many sequences per replica, got " +
                             std::to_string(e.batch_per_replica));
  }
  e.feasible = true;
  // The share of the step's tokens one replica (a tp group) works on.
  const double batch_share =
      static_cast<double>(e.batch_per_replica) / static_cast<double>(p.global_batch) / cp;
  const double micro_share = batch_share / micro;  // one gradient-accumulation pass
  const int shards = plan.strategy == Strategy::kDataParallel ? tp : type.chips;

  // Compute, per layer and for the rest, by bound; batch work per microbatch pass.
  double layer_compute = 0, other_compute = 0;
  for (const ProfileOp& op : p.ops) {
    const bool batch = op.scaling == Scaling::kBatch;
    double share = batch ? micro_share : op.scaling == Scaling::kParameters ? 1.0 / shards : 1.0;
    if (op.tp_split) share /= tp;
    const OpTime t = TimeOp(op, spec, share, micro_share, tp, eff);
    // Per pass for layer ops (the layer's timeline repeats per microbatch), per step otherwise.
    const double seconds = t.seconds * op.count;
    const double total = seconds * (op.per_layer ? p.layers : 1) * (batch ? micro : 1);
    if (op.per_layer) {
      layer_compute += seconds;
    } else {
      other_compute += seconds * (batch ? micro : 1);
    }
    (t.bound == OpTime::kMxu   ? e.mxu_seconds
     : t.bound == OpTime::kHbm ? e.hbm_seconds
                               : e.vector_seconds) += total;
  }
  // Per layer and pass: collectives and host transfers overlap compute; the experts' all-to-all,
  // context parallelism's gathers and the unhidden share of the tensor-parallel all-reduces sit
  // on the critical path and add.
  const bool layered = p.layers > 0;
  double layer_comm = 0;
  if (layered) {
    layer_comm = StateCollectives(p, p.layer, plan.strategy, tp, spec, mesh->replicas, eff);
    if (ep > 1) {
      StateBytes mine = p.experts;  // the group member's experts, gathered over the others
      mine.gathered /= ep;
      mine.gradients /= ep;
      layer_comm += StateCollectives(p, mine, plan.strategy, tp, spec, expert_mesh->replicas, eff);
    } else {
      layer_comm += StateCollectives(p, p.experts, plan.strategy, tp, spec, mesh->replicas, eff);
    }
  }
  const double other_comm =
      StateCollectives(p, p.other, plan.strategy, tp, spec, mesh->replicas, eff);
  const double tp_comm =
      tp > 1 ? AllReduceSeconds(spec, mesh->tp, p.tp_allreduce_bytes_per_layer * micro_share, eff)
             : 0;
  const double a2a_comm =
      ep > 1 ? AllToAllSeconds(spec, expert_mesh->tp,
                               p.all_to_all_bytes_per_layer * micro_share / tp, eff)
             : 0;
  // Context parallelism: the group's K and V gathered forward and for the recompute, their
  // gradients reduce-scattered.
  const double cp_comm =
      cp > 1 ? 3 * AllGatherSeconds(spec, context_mesh->tp,
                                    p.cp_allgather_bytes_per_layer * micro_share * cp, eff)
             : 0;
  const double offloaded_per_layer =
      (p.host_offload_bytes_per_layer + p.host_offload_bytes_per_layer_tp / tp) * micro_share;
  const double layer_host = 2 * HostLinkSeconds(type.generation, offloaded_per_layer, eff);
  const double layers = layered ? p.layers : 0;
  // Efficiency::tp_overlap of the tensor-parallel all-reduces hides behind the layer's compute
  // with its other collectives; the rest adds.
  const double tp_hidden = eff.tp_overlap * tp_comm, tp_exposed = tp_comm - tp_hidden;
  const double layer_overlapped = std::max({layer_compute, layer_comm + tp_hidden, layer_host});
  const double layer_pass = layer_overlapped + tp_exposed + a2a_comm + cp_comm;
  // Optimizer-state offload: the moments come in for the update and go back, once per step.
  const double optimizer_bytes =
      (layers * (p.layer.optimizer + p.experts.optimizer) + p.other.optimizer) / shards;
  const double optimizer_host =
      plan.offload_optimizer ? 2 * HostLinkSeconds(type.generation, optimizer_bytes, eff) : 0;
  e.step_seconds =
      micro * layers * layer_pass + std::max(other_compute, other_comm * micro) + optimizer_host;
  e.collective_seconds =
      micro * (layers * (layer_comm + tp_comm + a2a_comm + cp_comm) + other_comm);
  e.ici_seconds =
      micro * layers *
          (std::max(0.0, std::min(layer_comm + tp_hidden, layer_overlapped) - layer_compute) +
           tp_exposed + a2a_comm + cp_comm) +
      std::max(0.0, other_comm * micro - other_compute);
  e.host_transfer_seconds = micro * layers * layer_host + optimizer_host;
  e.host_seconds =
      micro * layers * std::max(0.0, layer_host - std::max(layer_compute, layer_comm + tp_hidden)) +
      optimizer_host;
  // Memory per chip.
  MemoryPerChip& m = e.memory;
  const double l = layers;
  const auto sum = [&](double StateBytes::*field) {
    return (l * (p.layer.*field + p.experts.*field) + p.other.*field) / shards;
  };
  m.weights = sum(&StateBytes::weights);
  m.gradients = p.training ? sum(&StateBytes::gradients) : 0;
  m.optimizer = plan.offload_optimizer ? 0 : optimizer_bytes;
  const double gathered =
      plan.strategy == Strategy::kDataParallel
          ? 0
          : (layered ? 2 * (p.layer.gathered + p.experts.gathered / ep) : p.other.gathered) / tp;
  m.activations = (p.activation_bytes + p.activation_bytes_tp / tp) * micro_share;
  m.working = gathered + (p.transient_bytes + p.transient_bytes_tp / tp) * micro_share;
  m.total = m.weights + m.gradients + m.optimizer + m.activations + m.working;
  m.capacity = spec.hbm_bytes * eff.usable_hbm;
  m.host = layers * offloaded_per_layer + (plan.offload_optimizer ? optimizer_bytes : 0);
  const double state = m.weights + m.gradients + m.optimizer + gathered;
  e.fits = m.total <= m.capacity;
  if (state > m.capacity) {
    e.problem = "does not fit: weights, gradients and optimizer state need " + Gib(state) +
                " per chip, " + Gib(m.capacity) + " usable";
  } else if (!e.fits) {
    e.problem = "slice too small for the batch: activations need " + Gib(m.total - state) +
                " per chip beside " + Gib(state) + " of state, " + Gib(m.capacity) + " usable";
  }

  // XLA's rematerialisation pass: when the kept activations overflow HBM, XLA recomputes some
  // of them (never the layer inputs) to fit, at the cost of re-running the matmuls that
  // produced them.
  const double reducible = p.reducible_activation_bytes_tp / tp * micro_share;
  const double excess = m.total - m.capacity;
  if (!e.fits && state <= m.capacity && reducible > 0 && excess <= reducible) {
    const double fraction = excess / reducible;
    const double extra = micro * layers * fraction * p.reducible_flops_per_layer * micro_share /
                         tp / (spec.PeakBf16Flops() * eff.mxu);
    e.step_seconds += extra;
    e.mxu_seconds += extra;
    m.rematerialized = excess;
    m.activations -= excess;
    m.total -= excess;
    e.fits = true;
    e.problem.clear();
  }

  const std::pair<double, const char*> bounds[] = {{e.mxu_seconds, "MXU"},
                                                   {e.hbm_seconds, "HBM bandwidth"},
                                                   {e.vector_seconds, "vector"},
                                                   {e.ici_seconds, "ICI"},
                                                   {e.host_seconds, "host link"}};
  e.bottleneck = std::max_element(std::begin(bounds), std::end(bounds))->second;

  if (e.step_seconds > 0) {
    e.units_per_second = p.units_per_step / e.step_seconds;
    e.units_per_second_per_chip = e.units_per_second / type.chips;
    e.mfu = p.model_flops / (e.step_seconds * type.chips * spec.published_peak_bf16_flops);
  }

  // Dollars.
  const ChipPrice& price = prices.Of(type.generation);
  auto money = [&](double per_chip_hour) {
    Money out;
    out.per_hour = per_chip_hour * type.chips;
    out.per_step = out.per_hour * e.step_seconds / 3600.0;
    out.per_million_units = p.units_per_step > 0 ? out.per_step / p.units_per_step * 1e6 : 0;
    return out;
  };
  e.on_demand = money(price.on_demand_usd_per_chip_hour);
  e.spot = money(price.spot_usd_per_chip_hour);
  return e;
}

}  // namespace tpuemu::engine::cost
