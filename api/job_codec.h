// The request side of jobs.submit: a POST .../nodes/N/jobs body and its jobId, decoded into the
// typed service::JobSubmission that JobManager::Submit takes (as node_codec.h does for nodes).
//
// Why the field-by-field decoding itself (ParseJobSpec) stays in service/jobs/job_spec.h: the
// spec's JSON is also what the store keeps (its canonical form, JobSpecToJson), and service
// decodes that stored text again — JobManager::Recover re-queues the jobs a restart left, and
// service/compare prices a workload given the same way. Service cannot include api/, and a second
// decoder of the same form would drift from this one, breaking the round trip that requestId
// idempotency relies on (the canonical form is hashed). So this file owns what is the request's
// alone — the body's shape on the wire, the jobId — and calls that one decoder.
// Errors: INVALID_ARGUMENT naming the field, as ParseJobSpec words them. Stateless: thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "service/jobs/job_spec.h"
#include "service/jobs/job_submission.h"

namespace tpuemu::api {

// The submission of `body` (parsed by ParseBody) to `node`; `job_id` as given (empty: the
// manager names the job), checked against `limits` (JobManager::limits()).
Result<service::JobSubmission> DecodeJobSubmission(const service::NodeKey& node,
                                                   const nlohmann::json& body, std::string job_id,
                                                   const service::JobLimits& limits);

}  // namespace tpuemu::api
