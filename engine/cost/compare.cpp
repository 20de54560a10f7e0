#include "engine/cost/compare.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tpuemu::engine::cost {
namespace {

constexpr int kTpDegrees[] = {2, 4, 8, 16};

std::vector<Plan> PlansFor(const AcceleratorType& type, const StepProfile& p,
                           const CompareOptions& o) {
  std::vector<Plan> plans;
  auto wanted = [&](Strategy s) { return !o.strategy || *o.strategy == s; };
  if (wanted(Strategy::kDataParallel)) plans.push_back({Strategy::kDataParallel, 1});
  if (wanted(Strategy::kFsdp)) {
    if (o.ep > 0 || o.cp > 0) {
      Plan named{Strategy::kFsdp, 1, std::max(o.ep, 1)};
      named.cp = std::max(o.cp, 1);
      plans.push_back(named);
    } else {
      plans.push_back({Strategy::kFsdp, 1});
      for (int ep = 2; ep <= p.max_ep && ep <= type.chips; ep *= 2) {
        if (p.max_ep % ep == 0 && type.chips % ep == 0) plans.push_back({Strategy::kFsdp, 1, ep});
      }
      // Fewer sequences than chips: context parallelism, from the smallest degree that gives
      // every chip a share of a sequence, and one more.
      for (int cp = 2, extra = 0; cp <= type.chips && p.global_batch < type.chips && extra < 2;
           cp *= 2) {
        if (type.chips % cp != 0 || p.max_cp % cp != 0) continue;
        Plan plan{Strategy::kFsdp, 1};
        plan.cp = cp;
        plans.push_back(plan);
        if (p.global_batch >= type.chips / cp) ++extra;
      }
    }
  }
  if (wanted(Strategy::kTensorParallel)) {
    if (o.tp > 0) {
      plans.push_back({Strategy::kTensorParallel, o.tp});
    } else {
      const size_t before = plans.size();
      for (int tp : kTpDegrees) {
        if (type.chips % tp == 0 && p.max_tp % tp == 0) {
          plans.push_back({Strategy::kTensorParallel, tp});
        }
      }
      // tp asked for but no degree applies (a program, a 1-chip slice): one plan that says why.
      if (o.strategy && plans.size() == before) plans.push_back({Strategy::kTensorParallel, 2});
    }
  }
  return plans;
}

// The memory levers, in the order they are tried: none first, then (when nothing fits, or as
// named) optimizer-state offload and gradient accumulation.
std::vector<std::pair<int, bool>> LeversFor(const CompareOptions& o, bool first_pass) {
  if (o.microbatches > 0 || o.offload_optimizer) {
    if (!first_pass) return {};
    return {{std::max(o.microbatches, 1), o.offload_optimizer.value_or(false)}};
  }
  if (first_pass) return {{1, false}};
  std::vector<std::pair<int, bool>> levers = {{1, true}};
  for (int micro : {2, 4, 8}) {
    for (bool offload : {false, true}) levers.push_back({micro, offload});
  }
  return levers;
}

// Fits beats not; then faster; among plans that do not fit, less memory.
bool Better(const Estimate& a, const Estimate& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (!a.feasible) return false;
  if (a.fits != b.fits) return a.fits;
  if (a.fits) return a.step_seconds < b.step_seconds;
  return a.memory.total < b.memory.total;
}

}  // namespace

Result<std::vector<AcceleratorType>> ResolveCandidates(const std::vector<std::string>& names) {
  const auto& all = AllAcceleratorTypes();
  if (names.empty()) return all;
  std::set<std::string> chosen;
  for (const std::string& name : names) {
    if (Result<AcceleratorType> t = FindAcceleratorType(name); t.ok()) {
      chosen.insert(t->name);
      continue;
    }
    Result<Generation> g = ParseGeneration(name);
    if (!g.ok()) {
      return Status::NotFound("unknown accelerator type or generation '" + name +
                              "' (e.g. v5p-128, v6e-8, or a generation: v2 v3 v4 v5e v5p v6e)");
    }
    for (const AcceleratorType& t : all) {
      if (t.generation == *g) chosen.insert(t.name);
    }
  }
  std::vector<AcceleratorType> out;
  for (const AcceleratorType& t : all) {
    if (chosen.count(t.name) > 0) out.push_back(t);
  }
  return out;
}

Result<Comparison> Compare(const CompareSource& source, const CompareOptions& o) {
  Result<std::vector<AcceleratorType>> types = ResolveCandidates(o.candidates);
  if (!types.ok()) return types.status();
  if (o.tp != 0 && (!o.strategy || *o.strategy != Strategy::kTensorParallel)) {
    return Status::InvalidArgument("tp: a tensor-parallel degree needs strategy tp");
  }
  if (o.tp < 0 || o.tp > 4096) return Status::InvalidArgument("tp must be 1..4096");
  if (o.ep < 0 || o.ep > 4096) return Status::InvalidArgument("ep must be 1..4096");
  if (o.cp < 0 || o.cp > 4096) return Status::InvalidArgument("cp must be 1..4096");
  if (o.microbatches < 0 || o.microbatches > 1024) {
    return Status::InvalidArgument("microbatches must be 1..1024");
  }
  std::vector<StepProfile> profiles;
  const auto* shape = std::get_if<TransformerShape>(&source);
  const bool training = !shape || (shape->seq_len > 0 && shape->global_batch > 0);
  if (!training && !o.serving) {
    return Status::InvalidArgument(
        "model.seqLen and model.globalBatch are required (or give a preset)");
  }
  if (!training) {
    // Serving only: the rows' training columns say why they are empty.
    Comparison c;
    c.name = shape->name;
    c.source = "model shapes";
    c.unit = "tokens";
    c.parameters = TransformerParameters(*shape);
    c.serving = o.serving;
    for (const AcceleratorType& type : *types) {
      TypeComparison row;
      row.best.accelerator_type = type.name;
      row.best.generation = type.generation;
      row.best.chips = type.chips;
      row.best.problem = "training: give model.seqLen and model.globalBatch";
      row.serving = EstimateServing(*shape, type, *o.serving, o.prices, o.efficiency);
      c.rows.push_back(std::move(row));
    }
    c.gpu_reference = GpuReference(0, 0, c.parameters, shape, o.serving);
    return c;
  }
  if (shape) {
    if (o.remat) {
      profiles.push_back(TransformerProfile(*shape, *o.remat, o.efficiency));
    } else {
      // Auto leaves out "none": every published run the model is calibrated on rematerialises
      // (docs/cost-model.md), so "none" is priced only when named.
      for (const Remat& r : AutoRemats()) {
        profiles.push_back(TransformerProfile(*shape, r, o.efficiency));
      }
    }
  } else {
    if (o.remat) return Status::InvalidArgument("remat applies to model shapes only");
    if (o.serving) return Status::InvalidArgument("serving applies to model shapes only");
    profiles.push_back(std::get<StepProfile>(source));
  }
  const StepProfile& first = profiles.front();
  Comparison c;
  c.name = first.name;
  c.source = first.source;
  c.unit = first.unit;
  c.units_per_step = first.units_per_step;
  c.model_flops = first.model_flops;
  c.parameters = first.parameters;
  c.global_batch = first.global_batch;
  c.serving = o.serving;
  for (const AcceleratorType& type : *types) {
    TypeComparison row;
    bool have = false;
    for (bool first_pass : {true, false}) {
      if (!first_pass && have && row.best.fits) break;  // the levers only when nothing fits
      for (const auto& [micro, offload] : LeversFor(o, first_pass)) {
        for (const StepProfile& p : profiles) {
          for (Plan plan : PlansFor(type, p, o)) {
            plan.microbatches = micro;
            plan.offload_optimizer = offload;
            Estimate e = EstimatePlan(p, type, plan, o.prices, o.efficiency);
            ++c.plans_evaluated;
            if (!have || Better(e, row.best)) {
              row.best = e;
              have = true;
            }
            if (o.keep_all_plans) row.plans.push_back(std::move(e));
          }
        }
      }
    }
    if (o.serving) {
      row.serving = EstimateServing(std::get<TransformerShape>(source), type, *o.serving, o.prices,
                                    o.efficiency);
    }
    c.rows.push_back(std::move(row));
  }
  c.gpu_reference = GpuReference(c.model_flops, c.units_per_step, c.parameters, shape, o.serving);
  return c;
}

}  // namespace tpuemu::engine::cost
