#include "api/job_codec.h"

#include <utility>

namespace tpuemu::api {

Result<service::JobSubmission> DecodeJobSubmission(const service::NodeKey& node,
                                                   const nlohmann::json& body, std::string job_id,
                                                   const service::JobLimits& limits) {
  Result<service::JobSpec> spec = service::ParseJobSpec(body, limits);
  if (!spec.ok()) return spec.status();
  return service::JobSubmission{
      .node = node, .job_id = std::move(job_id), .spec = std::move(spec).value()};
}

}  // namespace tpuemu::api
