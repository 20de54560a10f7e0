// RenderJob writes the job's JSON without parsing the stored spec and labels again; its text must
// be byte for byte what building the object with nlohmann::json and dumping it gives (how jobs
// were rendered before, and how api/ dumps every other body).
#include "service/jobs/job_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "service/jobs/job_spec.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

json ParseOr(const std::optional<std::string>& text, json fallback) {
  if (!text) return fallback;
  json j = json::parse(*text, nullptr, false);
  return j.is_discarded() ? fallback : j;
}

// The rendering by way of a parsed nlohmann::json object.
std::string Reference(const Job& job) {
  json j;
  j["name"] = job.name;
  j["jobId"] = job.job_id;
  j["node"] = job.NodeName();
  j["state"] = JobStateName(job.state);
  j["priority"] = job.priority;
  j["labels"] = ParseOr(job.labels_json, json::object());
  j["spec"] = ParseOr(job.spec_json, json::object());
  if (job.request_id) j["requestId"] = *job.request_id;
  j["createTime"] = job.create_time;
  if (job.start_time) j["startTime"] = *job.start_time;
  if (job.end_time) j["endTime"] = *job.end_time;
  if (job.exit_code) j["exitCode"] = *job.exit_code;
  if (job.reason) j["reason"] = *job.reason;
  if (job.result_json) {
    json result = ParseOr(job.result_json, json::object());
    if (result.is_object()) result.erase("profile");
    if (!result.empty()) j["result"] = std::move(result);
  }
  j["attempt"] = job.attempt;
  j["maxRetries"] = job.max_retries;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Job Queued(const char* spec_body) {
  Job job;
  job.seq = 7;
  job.project = "p";
  job.zone = "us-central2-b";
  job.node_id = "tpu1";
  job.job_id = "job-0000000001";
  job.name = job.NodeName() + "/jobs/" + job.job_id;
  Result<JobSpec> spec = ParseJobSpec(json::parse(spec_body));
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  CanonicalSpec canonical = Canonicalize(*spec);
  job.spec_json = canonical.json;
  job.spec_hash = canonical.hash;
  job.labels_json = json(spec->labels).dump();
  job.create_time = "2026-01-02T03:04:05.123456Z";
  return job;
}

TEST(RenderJobTest, MatchesTheNlohmannRenderingInEveryState) {
  Job job = Queued(R"({"workload": {"mlp": {"steps": 3, "learningRate": 0.1}},
                       "labels": {"team": "ml", "é": "ü\"q"}, "priority": -3, "seed": 9})");
  EXPECT_EQ(RenderJob(job), Reference(job));

  job.state = JobState::kRunning;
  job.start_time = "2026-01-02T03:04:06.000001Z";
  job.result_json = R"({"profile": {"ops": [], "hbmPeakBytesPerTensorCore": 4}})";
  EXPECT_EQ(RenderJob(job), Reference(job));  // a profile alone: no "result"

  job.state = JobState::kSucceeded;
  job.end_time = "2026-01-02T03:04:07.5Z";
  job.exit_code = 0;
  job.reason = "completed 3 steps";
  job.request_id = "req-1";
  job.attempt = 2;
  job.max_retries = 3;
  job.result_json =
      json{{"profile", {{"ops", json::array()}}},
           {"finalLoss", 0.25},
           {"outputs", {{"loss", {{"checksum", 1.5}, {"sample", {1.5}}}}}},
           {"metrics", {{"steps", 3}, {"emulatedTflops", 0.0}, {"acceleratorType", "v4-8"}}}}
          .dump();
  EXPECT_EQ(RenderJob(job), Reference(job));

  job.state = JobState::kFailed;
  job.exit_code = 1;
  job.reason = "RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm";
  job.result_json.reset();
  EXPECT_EQ(RenderJob(job), Reference(job));
}

TEST(RenderJobTest, ProgramSpecsAndOddStringsMatchToo) {
  Job job = Queued(R"({"program": {"name": "p\u0001", "ops": [
      {"id": "a", "op": "parameter", "shape": [2, 2], "fill": 0.1},
      {"id": "b", "op": "dot", "inputs": ["a", "a"]}], "outputs": ["b"]},
      "precision": "HIGHEST", "timeoutSeconds": 5})");
  job.job_id = std::string("bad\xff utf8 \"quoted\"");  // a client's jobId, replaced on output
  job.reason = "line\nbreak\ttab";
  EXPECT_EQ(RenderJob(job), Reference(job));
}

TEST(RenderJobTest, DamagedStoredTextFallsBackToAnEmptyObject) {
  Job job = Queued(R"({"workload": {"matmul": {}}})");
  job.spec_json = "not json";
  job.labels_json = "";
  job.result_json = "{broken";
  EXPECT_EQ(RenderJob(job), Reference(job));
  EXPECT_NE(RenderJob(job).find(R"("spec":{})"), std::string::npos);
}

}  // namespace
}  // namespace tpuemu::service
