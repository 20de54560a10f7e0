#include "engine/cost/remat_policy.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

namespace tpuemu::engine::cost {
namespace {

using nlohmann::json;
constexpr Placement R = Placement::kRecompute, D = Placement::kDevice, O = Placement::kOffload;

// MaxText/layers/decoders.py get_remat_policy: the names each policy saves (D) or offloads (O).
const std::array<Remat, 9>& Named() {
  static const std::array<Remat, 9> named = {{
      Remat::kNone,
      Remat::kMinimal,
      Remat::kFull,
      {"save_dot_except_mlpwi", D, D, D, D, D, R, D, false},
      {"save_dot_except_mlp", D, D, D, D, D, R, R, false},
      {"save_qkv_proj", D, D, D, D, R, R, R, false},
      {"save_out_proj", D, R, R, R, D, R, R, false},
      {"qkv_proj_offloaded", D, O, O, O, R, R, R, false},
      {"minimal_offloaded", D, O, O, O, O, O, O, false},
  }};
  return named;
}

// The tensors a custom policy names, as JSON keys, and where each lives in Remat.
constexpr std::array<std::pair<const char*, Placement Remat::*>, 7> kTensors = {{
    {"decoderLayerInput", &Remat::layer_input},
    {"queryProj", &Remat::query},
    {"keyProj", &Remat::key},
    {"valueProj", &Remat::value},
    {"outProj", &Remat::out_proj},
    {"mlpwi", &Remat::mlp_in},
    {"mlpwo", &Remat::mlp_out},
}};

}  // namespace

std::string_view PlacementName(Placement p) {
  switch (p) {
    case Placement::kRecompute:
      return "remat";
    case Placement::kDevice:
      return "device";
    case Placement::kOffload:
      return "offload";
  }
  return "remat";
}

bool Remat::Offloads() const {
  return std::any_of(kTensors.begin(), kTensors.end(),
                     [&](const auto& t) { return this->*(t.second) == Placement::kOffload; });
}

std::string_view RematName(const Remat& remat) { return remat.name; }

std::vector<std::string> RematNames() {
  std::vector<std::string> names;
  for (const Remat& r : Named()) names.emplace_back(r.name);
  return names;
}

Result<Remat> ParseRemat(std::string_view name) {
  for (const Remat& r : Named()) {
    if (name == r.name) return r;
  }
  std::string names;
  for (const std::string& n : RematNames()) names += (names.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown remat policy '" + std::string(name) + "' (expected " +
                                 names + ", or a custom object)");
}

Result<Remat> ParseRematJson(const json& remat) {
  if (remat.is_string()) return ParseRemat(remat.get<std::string>());
  if (!remat.is_object()) {
    return Status::InvalidArgument("remat must be a policy name or an object of placements");
  }
  Remat r;
  r.name = "custom";
  for (const auto& item : remat.items()) {
    const auto it = std::find_if(kTensors.begin(), kTensors.end(),
                                 [&](const auto& t) { return item.key() == t.first; });
    if (it == kTensors.end()) {
      return Status::InvalidArgument(
          "remat." + item.key() +
          " is not a tensor of the layer (decoderLayerInput, queryProj, keyProj, valueProj, "
          "outProj, mlpwi, mlpwo)");
    }
    const json& v = item.value();
    std::optional<Placement> place;
    for (Placement p : {Placement::kRecompute, Placement::kDevice, Placement::kOffload}) {
      if (v.is_string() && v.get<std::string>() == PlacementName(p)) place = p;
    }
    if (!place) {
      return Status::InvalidArgument("remat." + item.key() +
                                     " must be \"device\", \"offload\" or \"remat\"");
    }
    if (it->second == &Remat::layer_input && *place == Placement::kRecompute) {
      // The scan carry is an input of the layer: there is nothing to recompute it from.
      return Status::InvalidArgument(
          "remat.decoderLayerInput must be \"device\" or \"offload\" (the layer's input cannot "
          "be recomputed)");
    }
    r.*(it->second) = *place;
  }
  return r;
}

json RematToJson(const Remat& r) {
  if (r.name != "custom") return std::string(r.name);
  json j = json::object();
  for (const auto& [key, member] : kTensors) j[key] = std::string(PlacementName(r.*member));
  return j;
}

const std::vector<Remat>& AutoRemats() {
  // The recipes' custom policy: the layer input and the attention projections offloaded, the
  // MLP recomputed (tpu-recipes training/trillium/Llama3.1-8B-MaxText/v6e-8, Mixtral-8x7B).
  static const std::vector<Remat> autos = [] {
    std::vector<Remat> v = {Remat::kMinimal, Remat::kFull};
    for (const char* name : {"save_dot_except_mlpwi", "qkv_proj_offloaded", "minimal_offloaded"}) {
      v.push_back(*ParseRemat(name));
    }
    v.push_back({"custom", O, O, O, O, O, R, R, false});
    return v;
  }();
  return autos;
}

}  // namespace tpuemu::engine::cost
