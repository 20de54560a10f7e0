// Rematerialisation policies as MaxText spells them (MaxText/layers/decoders.py, get_remat_policy,
// AI-Hypercomputer/maxtext@8b8c399): for each tensor of a decoder layer that the backward pass
// needs, whether it is kept in HBM ("device"), copied to the host's pinned memory in the forward
// pass and back in the backward pass ("offload"), or recomputed ("remat").
//
// The tensors, by MaxText's checkpoint names: decoder_layer_input (the scan carry: never
// recomputed, only kept or offloaded), query_proj, key_proj, value_proj, out_proj, mlpwi
// (mlpwi_0 and mlpwi_1 of a gated MLP) and mlpwo. "none" keeps every activation, attention's
// and the elementwise ops' included.
//
// Named policies: none, minimal, full, save_dot_except_mlpwi, save_dot_except_mlp, save_qkv_proj,
// save_out_proj, qkv_proj_offloaded, minimal_offloaded. A custom policy is a JSON object naming
// each tensor's place, as the recipes' `remat_policy=custom` flags do:
//   {"decoderLayerInput": "offload", "queryProj": "offload", "keyProj": "offload",
//    "valueProj": "offload", "outProj": "offload", "mlpwi": "remat", "mlpwo": "remat"}
// (unnamed tensors: "remat", the layer input "device").
// Errors: INVALID_ARGUMENT naming the policy or the field. Plain data: thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::engine::cost {

enum class Placement { kRecompute, kDevice, kOffload };
std::string_view PlacementName(Placement p);  // "remat", "device", "offload"

struct Remat {
  std::string_view name = "full";
  Placement layer_input = Placement::kDevice;
  Placement query = Placement::kRecompute;
  Placement key = Placement::kRecompute;
  Placement value = Placement::kRecompute;
  Placement out_proj = Placement::kRecompute;
  Placement mlp_in = Placement::kRecompute;
  Placement mlp_out = Placement::kRecompute;
  bool keep_everything = false;  // "none"

  bool Offloads() const;  // any tensor goes to the host
  bool operator==(const Remat&) const = default;

  static const Remat kNone, kMinimal, kFull;
};

inline constexpr Remat Remat::kNone{"none",
                                    Placement::kDevice,
                                    Placement::kDevice,
                                    Placement::kDevice,
                                    Placement::kDevice,
                                    Placement::kDevice,
                                    Placement::kDevice,
                                    Placement::kDevice,
                                    true};
inline constexpr Remat Remat::kMinimal{"minimal",          Placement::kDevice, Placement::kDevice,
                                       Placement::kDevice, Placement::kDevice, Placement::kDevice,
                                       Placement::kDevice, Placement::kDevice, false};
inline constexpr Remat Remat::kFull{};

std::string_view RematName(const Remat& remat);
// A named policy. INVALID_ARGUMENT listing the names.
Result<Remat> ParseRemat(std::string_view name);
// A name or a custom policy object (above). INVALID_ARGUMENT naming the field.
Result<Remat> ParseRematJson(const nlohmann::json& remat);
nlohmann::json RematToJson(const Remat& remat);  // the name, or the custom object
std::vector<std::string> RematNames();

// What "auto" tries for model shapes: the policies the published runs use, offloading included
// ("none" only when named: no published run trains without rematerialisation).
const std::vector<Remat>& AutoRemats();

}  // namespace tpuemu::engine::cost
