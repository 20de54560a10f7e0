#include "service/jobs/job_json.h"

#include <nlohmann/json.hpp>

namespace tpuemu::service {
namespace {

using nlohmann::json;

void AppendValue(const json& value, std::string& out) {
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// `"key":` preceded by a comma unless it is the object's first member.
void AppendKey(const char* key, bool first, std::string& out) {
  if (!first) out += ',';
  out += '"';
  out += key;
  out += "\":";
}

// Stored JSON object text, or {} when the text is not an object (a damaged row): what parsing it
// with a fallback to {} gives for every text the service writes.
void AppendStoredObject(const std::string& text, std::string& out) {
  if (text.size() >= 2 && text.front() == '{' && text.back() == '}') {
    out += text;
  } else {
    out += "{}";
  }
}

}  // namespace

void AppendJobJson(const Job& job, std::string& out) {
  // Keys in std::map order: attempt createTime endTime exitCode jobId labels maxRetries name node
  // priority reason requestId result spec startTime state.
  out += '{';
  AppendKey("attempt", true, out);
  out += std::to_string(job.attempt);
  AppendKey("createTime", false, out);
  AppendValue(job.create_time, out);
  if (job.end_time) {
    AppendKey("endTime", false, out);
    AppendValue(*job.end_time, out);
  }
  if (job.exit_code) {
    AppendKey("exitCode", false, out);
    out += std::to_string(*job.exit_code);
  }
  AppendKey("jobId", false, out);
  AppendValue(job.job_id, out);
  AppendKey("labels", false, out);
  AppendStoredObject(job.labels_json, out);
  AppendKey("maxRetries", false, out);
  out += std::to_string(job.max_retries);
  AppendKey("name", false, out);
  AppendValue(job.name, out);
  AppendKey("node", false, out);
  AppendValue(job.NodeName(), out);
  AppendKey("priority", false, out);
  out += std::to_string(job.priority);
  if (job.reason) {
    AppendKey("reason", false, out);
    AppendValue(*job.reason, out);
  }
  if (job.request_id) {
    AppendKey("requestId", false, out);
    AppendValue(*job.request_id, out);
  }
  if (job.result_json) {
    // The result is parsed: its profile has to go.
    json result = json::parse(*job.result_json, nullptr, /*allow_exceptions=*/false);
    if (result.is_discarded()) result = json::object();
    if (result.is_object()) result.erase("profile");
    if (!result.empty()) {
      AppendKey("result", false, out);
      AppendValue(result, out);
    }
  }
  AppendKey("spec", false, out);
  AppendStoredObject(job.spec_json, out);
  if (job.start_time) {
    AppendKey("startTime", false, out);
    AppendValue(*job.start_time, out);
  }
  AppendKey("state", false, out);
  out += '"';
  out += JobStateName(job.state);
  out += '"';
  out += '}';
}

std::string RenderJob(const Job& job) {
  std::string out;
  AppendJobJson(job, out);
  return out;
}

}  // namespace tpuemu::service
