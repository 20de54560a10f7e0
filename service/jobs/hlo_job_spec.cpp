#include "service/jobs/hlo_job_spec.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "engine/hlo/cost_model.h"
#include "engine/hlo/evaluator.h"
#include "engine/stablehlo/import.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;
namespace hlo = engine::hlo;

constexpr int64_t kMaxDevices = 4096;  // as JobSpec's cores
constexpr const char* kRunInstead = "; set hlo.estimateOnly to price the module without running it";

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidArgument(field + " " + what);
}

Status ReadBool(const json& obj, const char* key, bool* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  if (!it->is_boolean()) return Bad(std::string("hlo.") + key, "must be true or false");
  *out = it->get<bool>();
  return Status::Ok();
}

// "params": {"N": number | [numbers]}, each N an array parameter of the entry with 1 or all of
// its elements given.
Status ReadParams(const json& params, const hlo::Module& module,
                  std::map<int64_t, std::vector<double>>* out) {
  if (!params.is_object()) return Bad("hlo.params", "must be an object {\"0\": [values]}");
  const hlo::Computation& entry = module.entry_computation();
  for (auto it = params.begin(); it != params.end(); ++it) {
    const std::string field = "hlo.params." + it.key();
    int64_t n = -1;
    if (!it.key().empty() && it.key().size() < 10 &&
        it.key().find_first_not_of("0123456789") == std::string::npos) {
      n = std::stoll(it.key());
    }
    if (n < 0 || n >= static_cast<int64_t>(entry.parameters.size())) {
      return Bad(field, "is not a parameter number of the entry computation (it has " +
                            std::to_string(entry.parameters.size()) + ")");
    }
    const hlo::Shape& shape =
        entry.instructions[static_cast<size_t>(entry.parameters[static_cast<size_t>(n)])].shape;
    if (!shape.IsArray()) return Bad(field, "is a tuple parameter; values fill array parameters");
    std::vector<double> values;
    for (const json& v : it->is_array() ? *it : json::array({*it})) {
      if (!v.is_number()) return Bad(field, "must be a number or an array of numbers");
      values.push_back(v.get<double>());
    }
    if (values.size() != 1 && static_cast<int64_t>(values.size()) != shape.ElementCount()) {
      return Bad(field, "has " + std::to_string(values.size()) + " values; " + shape.ToString() +
                            " takes 1 or " + std::to_string(shape.ElementCount()));
    }
    (*out)[n] = std::move(values);
  }
  return Status::Ok();
}

// A run must be able to execute every instruction and hold every array.
Status CheckRunnable(const hlo::Module& module, const hlo::Limits& limits) {
  if (module.devices() > limits.max_devices) {
    return Bad("hlo:", "the module runs on " + std::to_string(module.devices()) +
                           " devices, above the limit max_devices = " +
                           std::to_string(limits.max_devices) + " of a run" + kRunInstead);
  }
  Status evaluable = hlo::CheckEvaluable(module);
  if (!evaluable.ok()) {
    return Bad("hlo:", evaluable.message() + kRunInstead + " (with hlo.allowUnsupported)");
  }
  for (const hlo::Computation& comp : module.computations) {
    for (const hlo::Instruction& inst : comp.instructions) {
      Status fits = hlo::ValidateStatic(inst.shape, limits.max_tensor_elements, inst.Describe());
      if (!fits.ok()) return Bad("hlo:", fits.message() + kRunInstead);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<const HloJobSpec>> ParseHloJobSpec(const json& body, int64_t cores,
                                                          bool cores_given,
                                                          const HloJobLimits& limits) {
  if (!body.is_object()) return Bad("hlo", "must be an object {\"text\": \"HloModule ...\"}");
  for (auto it = body.begin(); it != body.end(); ++it) {
    static const char* kKeys[] = {"text", "params", "distinctPerDevice", "estimateOnly",
                                  "allowUnsupported"};
    if (std::none_of(std::begin(kKeys), std::end(kKeys),
                     [&](const char* k) { return it.key() == k; })) {
      return Bad("hlo." + it.key(),
                 "is not a known field (text, params, distinctPerDevice, estimateOnly, "
                 "allowUnsupported)");
    }
  }
  auto text = body.find("text");
  if (text == body.end() || !text->is_string() || text->get_ref<const std::string&>().empty()) {
    return Bad("hlo.text", "must be the module's HLO text or StableHLO");
  }
  auto spec = std::make_shared<HloJobSpec>();
  spec->text = text->get<std::string>();
  if (static_cast<int64_t>(spec->text.size()) > limits.max_text_bytes) {
    return Bad("hlo.text", "is " + std::to_string(spec->text.size()) +
                               " bytes, above the limit max_hlo_text_bytes = " +
                               std::to_string(limits.max_text_bytes));
  }
  TPUEMU_RETURN_IF_ERROR(ReadBool(body, "distinctPerDevice", &spec->distinct_per_device));
  TPUEMU_RETURN_IF_ERROR(ReadBool(body, "estimateOnly", &spec->estimate_only));
  TPUEMU_RETURN_IF_ERROR(ReadBool(body, "allowUnsupported", &spec->allow_unsupported));
  if (spec->allow_unsupported && !spec->estimate_only) {
    return Bad("hlo.allowUnsupported",
               "applies to hlo.estimateOnly jobs (a run must execute every instruction)");
  }
  spec->limits.max_text_bytes = limits.max_text_bytes;
  spec->limits.max_instructions = limits.max_instructions;
  spec->limits.max_tensor_elements = limits.max_tensor_elements;
  // HLO text or StableHLO (docs/stablehlo.md), told apart by the text's first word.
  Result<hlo::Module> module = engine::stablehlo::ParseAnyModule(spec->text, spec->limits);
  if (!module.ok()) return Bad("hlo.text:", module.status().message());
  if (module->replica_count > kMaxDevices || module->num_partitions > kMaxDevices ||
      module->devices() > kMaxDevices) {
    return Bad("hlo.text:", "the module's replica_count x num_partitions (" +
                                std::to_string(module->replica_count) + " x " +
                                std::to_string(module->num_partitions) + ") is above " +
                                std::to_string(kMaxDevices) + " devices");
  }
  if (module->devices() > 1) {
    if (cores_given && cores != module->devices()) {
      return Bad("cores", "(" + std::to_string(cores) +
                              ") must equal the module's replica_count x num_partitions (" +
                              std::to_string(module->devices()) + "), or be left out");
    }
  } else {
    module->replica_count = cores;  // the job's devices run the module as replicas
  }
  if (!spec->estimate_only) TPUEMU_RETURN_IF_ERROR(CheckRunnable(*module, spec->limits));
  if (auto params = body.find("params"); params != body.end()) {
    TPUEMU_RETURN_IF_ERROR(ReadParams(*params, *module, &spec->params));
  }
  spec->module = std::make_shared<const hlo::Module>(std::move(module).value());
  return std::shared_ptr<const HloJobSpec>(std::move(spec));
}

json HloJobSpecToJson(const HloJobSpec& spec) {
  json params = json::object();
  for (const auto& [n, values] : spec.params) {
    params[std::to_string(n)] = values.size() == 1 ? json(values[0]) : json(values);
  }
  return {{"text", spec.text},
          {"params", params},
          {"distinctPerDevice", spec.distinct_per_device},
          {"estimateOnly", spec.estimate_only},
          {"allowUnsupported", spec.allow_unsupported}};
}

Result<std::shared_ptr<const HloPrice>> PriceHloJobOnNode(const HloJobSpec& spec,
                                                          const engine::AcceleratorType& type,
                                                          engine::Precision precision) {
  const auto start = std::chrono::steady_clock::now();
  hlo::CostOptions options;
  options.precision = precision;
  // A run has no unsupported instruction left (CheckRunnable): only the slice can fail it.
  options.allow_unsupported = spec.allow_unsupported || !spec.estimate_only;
  Result<hlo::ModuleCost> cost = hlo::PriceModule(*spec.module, engine::Slice(type), options);
  if (!cost.ok()) return Bad("hlo:", cost.status().message());
  auto price = std::make_shared<HloPrice>();
  price->cost = std::move(*cost);
  price->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::shared_ptr<const HloPrice>(std::move(price));
}

}  // namespace tpuemu::service
