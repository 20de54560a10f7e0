// The NOT_FOUND every resource of the API answers for a name that does not exist, with Google's
// wording: "Resource '<name>' was not found".
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace tpuemu::service {

inline Status ResourceNotFound(std::string_view name) {
  return Status::NotFound("Resource '" + std::string(name) + "' was not found");
}

// A store read's failure as the API reports it: the store's NOT_FOUND becomes
// ResourceNotFound(name); any other error (busy, I/O) is passed on unchanged.
inline Status NotFoundAs(const Status& status, std::string_view name) {
  return status.code() == StatusCode::kNotFound ? ResourceNotFound(name) : status;
}

}  // namespace tpuemu::service
