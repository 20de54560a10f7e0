// Validation of client-chosen names and values (docs/api-fidelity.md §5). Each function
// returns INVALID_ARGUMENT with a message naming the field and the offending value, or OK.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::service {

// The GCE name rule: ^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$ (1-63 characters).
Status ValidateNodeId(std::string_view node_id);
// Resource Manager label rules: at most 64; keys start with a lowercase letter, 1-63 of lowercase
// letters, digits, '_' and '-'; values 0-63 of the same; no '.', no uppercase (non-ASCII letters
// allowed).
Status ValidateLabels(const nlohmann::json& labels, std::string_view field = "labels");
// At most 512 characters.
Status ValidateDescription(std::string_view description);
// A project id as it appears in resource names: 6-30 of [a-z0-9-] is Google's rule, but emulators
// accept any non-empty id without '/'; we reject only the empty one and characters that break
// names.
Status ValidateProjectId(std::string_view project);

}  // namespace tpuemu::service
