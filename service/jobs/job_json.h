// The public JSON of a job, as compact text: name, jobId, node, state, priority, labels, spec,
// requestId, createTime/startTime/endTime, exitCode, reason, result (without its "profile", which
// is .../metrics's) and attempt.
//
// The stored spec and labels text is copied in as is, not parsed again: Submit wrote it with
// nlohmann's compact dump, so it is exactly the text that parsing and dumping it would give. The
// object's keys are written in the order nlohmann::json (a std::map) orders them, and every other
// value is dumped the way api/'s JsonResponse dumps (invalid UTF-8 replaced), so the text is
// byte for byte what dumping the equivalent nlohmann::json object gives. Stateless: thread-safe.
#pragma once

#include <string>

#include "service/jobs/job.h"

namespace tpuemu::service {

// Appends the job's JSON object to `out`.
void AppendJobJson(const Job& job, std::string& out);
std::string RenderJob(const Job& job);

}  // namespace tpuemu::service
