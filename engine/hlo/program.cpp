#include "engine/hlo/program.h"

#include <chrono>
#include <cmath>
#include <limits>

#include "engine/hlo/evaluator.h"
#include "engine/hlo/parser.h"

namespace tpuemu::engine::hlo {
namespace {

void SummarizeInto(const Value& v, std::vector<ArraySummary>& out) {
  if (v.is_tuple) {
    for (const Value& e : v.elements) SummarizeInto(e, out);
    return;
  }
  const Array& a = *v.array;
  ArraySummary s;
  s.shape = a.shape().ToString();
  s.elements = a.size();
  double sum = 0;
  int64_t finite = 0;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < a.size(); ++k) {
    const double x = a.GetDouble(k);
    if (k < 8) s.first.push_back(x);
    if (std::isnan(x)) {
      ++s.nans;
      continue;
    }
    if (std::isinf(x)) ++s.infs;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
    if (std::isfinite(x)) {
      sum += x;
      ++finite;
    }
  }
  if (s.elements == 0 || s.nans == s.elements) s.min = s.max = 0;
  s.mean = finite > 0 ? sum / static_cast<double>(finite) : 0;
  out.push_back(std::move(s));
}

}  // namespace

Result<RunResult> RunModule(const Module& module, const Slice& slice, const RunOptions& options) {
  CostOptions cost;
  cost.precision = options.precision;
  cost.allow_unsupported = true;
  // Fail on the slice before spending time on the run (an earlier price has passed this check).
  if (options.priced == nullptr && options.last_run == nullptr) {
    auto fits = PriceModule(module, slice, cost);
    if (!fits.ok()) return fits.status();
  }
  auto args = MakeArguments(module, options.inputs, options.limits);
  if (!args.ok()) return args.status();
  EvalOptions eval;
  eval.precision = options.precision;
  eval.seed = options.inputs.seed;
  eval.limits = options.limits;
  eval.cancel = options.cancel;
  eval.pool = options.pool;
  eval.pool_group = options.pool_group;
  eval.max_threads = options.max_threads;
  const auto start = std::chrono::steady_clock::now();
  auto result = Evaluate(module, *args, eval);
  if (!result.ok()) return result.status();
  RunResult run;
  run.host_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  run.outputs = std::move(result->outputs);
  run.executions = std::move(result->executions);
  if (options.last_run != nullptr && options.last_run->executions == run.executions) {
    run.cost = options.last_run->cost;
    run.repriced = false;
    return run;
  }
  if (options.priced != nullptr && options.priced->counts_exact) {
    run.cost = *options.priced;
    run.repriced = false;
    return run;
  }
  cost.allow_unsupported = options.allow_unsupported_pricing;
  cost.executions = run.executions;
  auto priced = PriceModule(module, slice, cost);
  if (!priced.ok()) return priced.status();
  run.cost = std::move(*priced);
  return run;
}

std::vector<ArraySummary> Summarize(const Value& value) {
  std::vector<ArraySummary> out;
  SummarizeInto(value, out);
  return out;
}

}  // namespace tpuemu::engine::hlo
