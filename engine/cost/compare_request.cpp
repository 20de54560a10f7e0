#include "engine/cost/compare_request.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <tuple>
#include <variant>

#include "engine/cost/program_profile.h"
#include "engine/frontend/program_json.h"
#include "engine/hlo/parser.h"
#include "engine/stablehlo/import.h"

namespace tpuemu::engine::cost {
namespace {

using nlohmann::json;

constexpr const char* kModelKeys[] = {"preset",  "layers",        "dModel",        "heads",
                                      "kvHeads", "headDim",       "ffn",           "vocab",
                                      "seqLen",  "globalBatch",   "gatedMlp",      "experts",
                                      "topK",    "sharedExperts", "capacityFactor"};

bool IsModelKey(const std::string& key) {
  return std::any_of(std::begin(kModelKeys), std::end(kModelKeys),
                     [&](const char* k) { return key == k; });
}

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidArgument(field + " " + what);
}

Status ReadString(const json& body, const char* key, std::string* out) {
  if (!body.contains(key)) return Status::Ok();
  if (!body[key].is_string()) return Bad(key, "must be a string");
  *out = body[key].get<std::string>();
  return Status::Ok();
}

Result<int64_t> Batch(const json& body) {
  if (!body.contains("batch")) return int64_t{0};
  if (!body["batch"].is_number_integer() || body["batch"].get<int64_t>() < 1) {
    return Bad("batch", "must be a positive integer");
  }
  return body["batch"].get<int64_t>();
}

Result<StepProfile> ProgramProfile(const json& body) {
  Result<int64_t> batch = Batch(body);
  if (!batch.ok()) return batch.status();
  Result<Graph> graph = ProgramFromJson(body["program"]);
  if (!graph.ok()) return Status::InvalidArgument("program: " + graph.status().message());
  Result<ProgramFigures> figures = FiguresFromGraph(*graph, *batch);
  if (!figures.ok()) return Status::InvalidArgument("program: " + figures.status().message());
  return ProfileFromFigures(*figures);
}

// {"hlo": {"text": "HloModule ...", "allowUnsupported": false}, "batch": N}
Result<StepProfile> HloProfile(const json& body) {
  Result<int64_t> batch = Batch(body);
  if (!batch.ok()) return batch.status();
  const json& hlo = body["hlo"];
  if (!hlo.is_object()) return Bad("hlo", "must be an object {\"text\": \"HloModule ...\"}");
  for (const auto& [key, value] : hlo.items()) {
    if (key != "text" && key != "allowUnsupported") {
      return Bad("hlo." + key, "is not a known field (text, allowUnsupported)");
    }
  }
  if (!hlo.contains("text") || !hlo["text"].is_string()) {
    return Bad("hlo.text", "must be the module's HLO text");
  }
  bool allow = false;
  if (auto it = hlo.find("allowUnsupported"); it != hlo.end()) {
    if (!it->is_boolean()) return Bad("hlo.allowUnsupported", "must be true or false");
    allow = it->get<bool>();
  }
  Result<hlo::Module> module = stablehlo::ParseAnyModule(hlo["text"].get_ref<const std::string&>());
  if (!module.ok()) return Status::InvalidArgument("hlo: " + module.status().message());
  Result<ProgramFigures> figures = FiguresFromHloModule(*module, *batch, allow);
  if (!figures.ok()) return Status::InvalidArgument("hlo: " + figures.status().message());
  return ProfileFromFigures(*figures);
}

}  // namespace

Result<CompareRequest> ParseCompareRequest(const json& body, const WorkloadPricer& workloads) {
  if (!body.is_object()) return Status::InvalidArgument("the request must be a JSON object");
  // Named locals, not structured bindings: clang 14 cannot capture a binding in a lambda.
  for (auto it = body.begin(); it != body.end(); ++it) {
    const std::string& key = it.key();
    static const char* kKnown[] = {
        "model",  "program", "hlo", "workload", "batch",        "acceleratorTypes", "strategy",
        "tp",     "ep",      "cp",  "remat",    "microbatches", "offloadOptimizer", "prices",
        "detail", "serving"};
    if (std::none_of(std::begin(kKnown), std::end(kKnown),
                     [&](const char* k) { return key == k; })) {
      return Bad(key,
                 "is not a known field (model, program, hlo, workload, batch, acceleratorTypes, "
                 "strategy, tp, ep, cp, remat, microbatches, offloadOptimizer, prices, detail, "
                 "serving)");
    }
  }
  const int sources = body.contains("model") + body.contains("program") + body.contains("hlo") +
                      body.contains("workload");
  if (sources != 1) {
    return Status::InvalidArgument("give exactly one of model, program, hlo or workload");
  }
  if (body.contains("batch") && !body.contains("program") && !body.contains("hlo")) {
    return Bad("batch", "applies to a program or an HLO module only (a model has globalBatch)");
  }
  CompareRequest r;
  if (body.contains("model")) {
    // Serving needs only the model's shape: without seqLen and globalBatch the training columns
    // say so and the serving ones are priced.
    Result<TransformerShape> shape = ParseTransformerShape(
        body["model"], body.contains("serving") ? ShapeUse::kServingOnly : ShapeUse::kTraining);
    if (!shape.ok()) return shape.status();
    r.source = *shape;
  } else if (body.contains("program") || body.contains("hlo")) {
    Result<StepProfile> p = body.contains("program") ? ProgramProfile(body) : HloProfile(body);
    if (!p.ok()) return p.status();
    r.source = std::move(p).value();
  } else {
    if (!workloads) {
      return Bad("workload",
                 "(a built-in workload) is priced by tpuemud's /_emulator/compare; "
                 "here give a model or a program");
    }
    Result<StepProfile> p = workloads(body["workload"]);
    if (!p.ok()) return p.status();
    r.source = std::move(p).value();
  }
  CompareOptions& o = r.options;
  if (body.contains("acceleratorTypes")) {
    const json& types = body["acceleratorTypes"];
    if (!types.is_array()) return Bad("acceleratorTypes", "must be an array of strings");
    for (const json& t : types) {
      if (!t.is_string()) return Bad("acceleratorTypes", "must be an array of strings");
      o.candidates.push_back(t.get<std::string>());
    }
  }
  std::string strategy = "auto";
  TPUEMU_RETURN_IF_ERROR(ReadString(body, "strategy", &strategy));
  if (strategy != "auto") {
    Result<Strategy> s = ParseStrategy(strategy);
    if (!s.ok()) return Bad("strategy:", s.status().message());
    o.strategy = *s;
  }
  if (body.contains("remat") && body["remat"] != "auto") {
    Result<Remat> m = ParseRematJson(body["remat"]);
    if (!m.ok()) return Bad("remat:", m.status().message());
    o.remat = *m;
  }
  for (const auto& [key, into, hi] : {std::tuple{"tp", &o.tp, 4096},
                                      {"ep", &o.ep, 4096},
                                      {"cp", &o.cp, 4096},
                                      {"microbatches", &o.microbatches, 1024}}) {
    if (!body.contains(key)) continue;
    const json& v = body[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > hi) {
      return Bad(key, "must be an integer in 1.." + std::to_string(hi));
    }
    *into = static_cast<int>(v.get<int64_t>());
  }
  if (body.contains("offloadOptimizer")) {
    if (!body["offloadOptimizer"].is_boolean()) {
      return Bad("offloadOptimizer", "must be true or false");
    }
    o.offload_optimizer = body["offloadOptimizer"].get<bool>();
  }
  if (body.contains("serving")) {
    if (!std::holds_alternative<TransformerShape>(r.source)) {
      return Bad("serving", "applies to model shapes only");
    }
    Result<ServingOptions> serving = ParseServingOptions(body["serving"]);
    if (!serving.ok()) return serving.status();
    o.serving = *serving;
  }
  if (body.contains("detail")) {
    if (!body["detail"].is_boolean()) return Bad("detail", "must be true or false");
    o.keep_all_plans = body["detail"].get<bool>();
  }
  if (body.contains("prices")) {
    TPUEMU_RETURN_IF_ERROR(o.prices.Merge(body["prices"]));
  }
  return r;
}

Result<json> CompareQueryToJson(const std::vector<std::pair<std::string, std::string>>& query) {
  json body = json::object();
  json model = json::object();
  for (const auto& field : query) {
    const std::string& key = field.first;  // not bindings: the lambdas below capture them
    const std::string& value = field.second;
    auto integer = [&](json* into) -> Status {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
        return Bad(key, "must be an integer, got '" + value + "'");
      }
      (*into)[key] = v;
      return Status::Ok();
    };
    auto boolean = [&](json* into) -> Status {
      if (value != "true" && value != "false") return Bad(key, "must be true or false");
      (*into)[key] = value == "true";
      return Status::Ok();
    };
    if (key == "preset") {
      model[key] = value;
    } else if (key == "gatedMlp") {
      TPUEMU_RETURN_IF_ERROR(boolean(&model));
    } else if (key == "capacityFactor") {
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      if (value.empty() || end != value.c_str() + value.size()) {
        return Bad(key, "must be a number, got '" + value + "'");
      }
      model[key] = v;
    } else if (IsModelKey(key)) {
      TPUEMU_RETURN_IF_ERROR(integer(&model));
    } else if (key == "acceleratorTypes") {
      json types = json::array();
      size_t start = 0;
      while (start <= value.size()) {
        const size_t end = std::min(value.find(',', start), value.size());
        if (end > start) types.push_back(value.substr(start, end - start));
        start = end + 1;
      }
      body[key] = types;
    } else if (key == "strategy" || key == "remat") {
      body[key] = value;
    } else if (key == "tp" || key == "ep" || key == "cp" || key == "microbatches") {
      TPUEMU_RETURN_IF_ERROR(integer(&body));
    } else if (key == "detail" || key == "offloadOptimizer") {
      TPUEMU_RETURN_IF_ERROR(boolean(&body));
    } else if (key.rfind("serving.", 0) == 0) {
      const std::string field = key.substr(8);
      if (!body.contains("serving")) body["serving"] = json::object();
      if (field == "weights" || field == "kvCache" || field == "engine") {
        body["serving"][field] = value;
      } else if (field == "shardOnBatch") {
        if (value != "true" && value != "false") return Bad(key, "must be true or false");
        body["serving"][field] = value == "true";
      } else {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
          return Bad(key, "must be an integer, got '" + value + "'");
        }
        body["serving"][field] = v;
      }
    } else {
      return Bad(key,
                 "is not a known query parameter (model fields, acceleratorTypes, strategy, "
                 "tp, ep, cp, remat, microbatches, offloadOptimizer, detail, serving.*)");
    }
  }
  if (model.empty()) return Status::InvalidArgument("give the model: preset or its shapes");
  body["model"] = model;
  return body;
}

}  // namespace tpuemu::engine::cost
