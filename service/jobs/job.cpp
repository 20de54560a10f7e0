#include "service/jobs/job.h"

#include <utility>

namespace tpuemu::service {

std::string Job::NodeName() const {
  return "projects/" + project + "/locations/" + zone + "/nodes/" + node_id;
}

db::JobRow JobToRow(const Job& job) {
  db::JobRow row;
  row.seq = job.seq;
  row.name = job.name;
  row.project = job.project;
  row.zone = job.zone;
  row.node_id = job.node_id;
  row.job_id = job.job_id;
  row.state = std::string(JobStateName(job.state));
  row.priority = job.priority;
  row.labels_json = job.labels_json;
  row.spec_json = job.spec_json;
  row.request_id = job.request_id;
  row.spec_hash = job.spec_hash;
  row.create_time = job.create_time;
  row.start_time = job.start_time;
  row.end_time = job.end_time;
  row.exit_code = job.exit_code;
  row.reason = job.reason;
  row.result_json = job.result_json;
  row.attempt = job.attempt;
  row.max_retries = job.max_retries;
  row.owner = job.owner;
  return row;
}

Result<Job> JobFromRow(db::JobRow row) {
  Result<JobState> state = ParseJobState(row.state);
  if (!state.ok()) {
    return Status::Internal("job " + row.name + " is stored in an unknown state '" + row.state +
                            "'");
  }
  Job job;
  job.seq = row.seq;
  job.name = std::move(row.name);
  job.project = std::move(row.project);
  job.zone = std::move(row.zone);
  job.node_id = std::move(row.node_id);
  job.job_id = std::move(row.job_id);
  job.state = *state;
  job.priority = row.priority;
  job.labels_json = std::move(row.labels_json);
  job.spec_json = std::move(row.spec_json);
  job.request_id = std::move(row.request_id);
  job.spec_hash = std::move(row.spec_hash);
  job.create_time = std::move(row.create_time);
  job.start_time = std::move(row.start_time);
  job.end_time = std::move(row.end_time);
  job.exit_code = row.exit_code;
  job.reason = std::move(row.reason);
  job.result_json = std::move(row.result_json);
  job.attempt = row.attempt;
  job.max_retries = row.max_retries;
  job.owner = row.owner;
  return job;
}

}  // namespace tpuemu::service
