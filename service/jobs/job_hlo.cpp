#include "service/jobs/job_hlo.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/frontend/from_graph.h"
#include "engine/frontend/init_values.h"
#include "service/jobs/hlo_job_spec.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

json TensorValues(const engine::Tensor& t) {
  json values = json::array();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.dtype() == engine::DType::kI32) {
      values.push_back(t.i32()[i]);
    } else {
      values.push_back(t.f32()[i]);
    }
  }
  return values;
}

// The values of each entry parameter of `lowering` as an hlo job's "params", or why there are
// none: the fed tensors of the workload's first shard, else each op's init spec.
Result<json> ParamValues(const JobSpec& spec, const engine::hlo::GraphLowering& lowering,
                         std::string* why_not) {
  Result<Workload> workload = Workload::Build(spec);
  if (!workload.ok()) return workload.status();
  const engine::Graph& graph = workload->graph();
  const std::map<std::string, engine::Tensor> feeds = workload->Feeds(0);
  json params = json::object();
  for (size_t i = 0; i < lowering.parameters.size(); ++i) {
    const std::string& id = lowering.parameters[i];
    if (auto fed = feeds.find(id); fed != feeds.end()) {
      params[std::to_string(i)] = TensorValues(fed->second);
      continue;
    }
    const engine::Op* op = graph.Find(id);
    if (op == nullptr || op->attrs.init.kind == engine::Init::Kind::kNone) {
      *why_not = "parameter '" + id + "' has no value until a client feeds it";
      return json::object();
    }
    engine::Tensor t(op->dtype, op->shape);
    TPUEMU_RETURN_IF_ERROR(engine::MaterializeInit(op->attrs.init, t));
    params[std::to_string(i)] = TensorValues(t);
  }
  return params;
}

}  // namespace

Result<json> JobHlo(const JobSpec& spec) {
  json job = {{"precision", engine::PrecisionName(spec.precision)}, {"steps", 1}};
  if (spec.hlo) {
    const json own = HloJobSpecToJson(*spec.hlo);
    job["hlo"] = {{"text", own["text"]}, {"params", own["params"]}};
    job["cores"] = spec.cores;
    job["seed"] = spec.seed;
    return json{{"job", job},
                {"parameters", json::array()},
                {"outputs", json::array()},
                {"valuesIncluded", false},
                {"note", "the job's own module and params, as submitted"}};
  }
  Result<Workload> shapes = Workload::BuildGraphOnly(spec);
  if (!shapes.ok()) return shapes.status();
  Result<engine::hlo::GraphLowering> lowering = engine::hlo::LowerGraph(shapes->graph());
  if (!lowering.ok()) return lowering.status();
  int64_t elements = 0;
  for (const std::string& id : lowering->parameters) {
    elements += shapes->graph().Find(id)->shape.NumElements();
  }
  std::string why_not;
  json params = json::object();
  if (elements > kMaxInlineHloValues) {
    why_not = "its parameters hold " + std::to_string(elements) + " values, more than the " +
              std::to_string(kMaxInlineHloValues) + " a reply carries";
  } else {
    Result<json> values = ParamValues(spec, *lowering, &why_not);
    if (!values.ok()) return values.status();
    params = std::move(*values);
  }
  std::string note =
      "one step of the job's graph" +
      std::string(spec.cores > 1 ? " on one of its " + std::to_string(spec.cores) +
                                       " data-parallel shards (no all-reduce)"
                                 : "") +
      ", forward and backward where it trains (the SGD update between steps is not in it)";
  note += why_not.empty() ? "; params hold the step's values"
                          : "; no params: " + why_not + " (an hlo job seeds them)";
  job["hlo"] = {{"text", lowering->text}, {"params", params}};
  return json{{"job", job},
              {"parameters", lowering->parameters},
              {"outputs", lowering->outputs},
              {"valuesIncluded", why_not.empty()},
              {"note", note}};
}

}  // namespace tpuemu::service
