#include "service/jobs/job_manager.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "engine/executor.h"
#include "service/common/clock.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

constexpr const char* kQueued = "QUEUED";
constexpr const char* kRunning = "RUNNING";

std::string NodeName(const db::JobRow& row) {
  return "projects/" + row.project + "/locations/" + row.zone + "/nodes/" + row.node_id;
}

json ParseOr(const std::optional<std::string>& text, json fallback) {
  if (!text) return fallback;
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

}  // namespace

bool IsTerminalJobState(std::string_view s) {
  return s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" || s == "TIMED_OUT";
}

json RenderJob(const db::JobRow& row) {
  json j;
  j["name"] = row.name;
  j["jobId"] = row.job_id;
  j["node"] = NodeName(row);
  j["state"] = row.state;
  j["priority"] = row.priority;
  j["labels"] = ParseOr(row.labels_json, json::object());
  j["spec"] = ParseOr(row.spec_json, json::object());
  if (row.request_id) j["requestId"] = *row.request_id;
  j["createTime"] = row.create_time;
  if (row.start_time) j["startTime"] = *row.start_time;
  if (row.end_time) j["endTime"] = *row.end_time;
  if (row.exit_code) j["exitCode"] = *row.exit_code;
  if (row.reason) j["reason"] = *row.reason;
  if (row.result_json) {
    json result = ParseOr(row.result_json, json::object());
    if (result.is_object()) result.erase("profile");  // the per-op profile is .../metrics's
    if (!result.empty()) j["result"] = std::move(result);
  }
  j["attempt"] = row.attempt;
  return j;
}

JobManager::JobManager(db::Store& store, NodeManager& nodes, Scheduler& scheduler,
                       engine::Pool& pool, engine::CompileCache& cache, JobLimits limits)
    : store_(store),
      nodes_(nodes),
      scheduler_(scheduler),
      pool_(pool),
      cache_(cache),
      limits_(limits),
      jobs_(store) {
  std::random_device rd;
  next_id_ = (uint64_t{rd()} << 20) & 0xffffffffffull;
}

JobManager::~JobManager() { Shutdown(); }

void JobManager::Shutdown() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  for (auto& [name, active] : active_) active->cancel = true;
  idle_.wait(lock, [&] { return running_tasks_ == 0; });
  queues_.clear();
  active_.clear();
}

Status JobManager::Recover() {
  Result<std::vector<db::JobRow>> running = [&]() -> Result<std::vector<db::JobRow>> {
    Result<std::vector<db::JobRow>> r = jobs_.ListInState(kRunning);
    if (!r.ok()) return r.status();
    return std::move(r).value();
  }();
  if (!running.ok()) return running.status();
  for (db::JobRow row : *running) {
    row.state = kQueued;
    row.attempt += 1;
    row.start_time.reset();
    Status s = store_.Transaction([&](db::Txn& txn) -> Status {
      TPUEMU_RETURN_IF_ERROR(jobs_.Update(txn, row));
      return jobs_.AppendLog(
          txn, row.name,
          "re-queued after a restart of tpuemud (attempt " + std::to_string(row.attempt) + ")");
    });
    if (!s.ok()) return s;
    NotifyTransition(row, kRunning);
  }
  Result<std::vector<db::JobRow>> queued = jobs_.ListInState(kQueued);
  if (!queued.ok()) return queued.status();
  std::lock_guard lock(mu_);
  for (const db::JobRow& row : *queued) EnqueueLocked(NodeName(row), row);
  for (auto& [node, q] : queues_) PumpLocked(node);
  return Status::Ok();
}

Result<db::JobRow> JobManager::Submit(const NodeKey& key, const json& body,
                                      const std::string& job_id, bool* created) {
  Result<JobSpec> spec = ParseJobSpec(body, limits_);
  if (!spec.ok()) return spec.status();
  Result<Node> node = nodes_.Get(key);
  if (!node.ok()) return node.status();
  if (node->state != NodeState::kReady) {
    return Status::FailedPrecondition("node " + key.Name() + " is " +
                                      std::string(NodeStateName(node->state)) +
                                      "; only a READY node accepts jobs");
  }
  if (spec->cores > node->type.tensorcores) {
    return Status::InvalidArgument("cores must be 1.." + std::to_string(node->type.tensorcores) +
                                   " (the TensorCores of " + node->type.name + ")");
  }
  db::JobRow row;
  row.project = key.project;
  row.zone = key.zone;
  row.node_id = key.node_id;
  if (!job_id.empty()) {
    row.job_id = job_id;
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "job-%010llx",
                  static_cast<unsigned long long>(next_id_.fetch_add(1)));
    row.job_id = buf;
  }
  row.name = key.Name() + "/jobs/" + row.job_id;
  row.state = kQueued;
  row.priority = spec->priority;
  row.labels_json = json(spec->labels).dump();
  row.spec_json = JobSpecToJson(*spec).dump();
  if (!spec->request_id.empty()) row.request_id = spec->request_id;
  row.spec_hash = JobSpecHash(*spec);
  row.create_time = NowRfc3339();
  bool inserted = false;
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    if (row.request_id) {
      Result<db::JobRow> existing =
          jobs_.GetByRequestId(txn, key.project, key.zone, key.node_id, *row.request_id);
      if (existing.ok()) {
        if (existing->spec_hash != row.spec_hash) {
          return Status::AlreadyExists("requestId '" + *row.request_id + "' was used by job " +
                                       existing->name + " with a different spec");
        }
        row = *existing;
        return Status::Ok();
      }
      if (existing.status().code() != StatusCode::kNotFound) return existing.status();
    }
    Result<int64_t> seq = jobs_.Insert(txn, row);
    if (!seq.ok()) return seq.status();
    row.seq = *seq;
    inserted = true;
    return jobs_.AppendLog(txn, row.name, "queued on " + key.Name());
  });
  if (!s.ok()) return s;
  if (created) *created = inserted;
  if (inserted) NotifyTransition(row, "");
  if (inserted) {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      EnqueueLocked(key.Name(), row);
      PumpLocked(key.Name());
    }
  }
  return row;
}

void JobManager::EnqueueLocked(const std::string& node, const db::JobRow& row) {
  if (active_.count(row.name)) return;
  active_[row.name] = std::make_shared<Active>();
  queues_[node].queued.insert({{-row.priority, row.seq}, row.name});
}

void JobManager::PumpLocked(const std::string& node) {
  NodeQueue& q = queues_[node];
  if (stopping_ || !q.running.empty() || q.queued.empty()) return;
  std::string name = q.queued.begin()->second;
  q.queued.erase(q.queued.begin());
  q.running = name;
  ++running_tasks_;
  Status s = pool_.Submit(node, [this, name] { Run(name); });
  if (!s.ok()) {
    --running_tasks_;
    q.running.clear();
  }
}

Result<db::JobRow> JobManager::Get(const std::string& name) const {
  Result<db::JobRow> row = jobs_.Get(name);
  if (!row.ok()) return row.status();
  return std::move(row).value();
}

Result<JobPage> JobManager::List(const JobListRequest& req) const {
  if (req.page.page_size < 0) return Status::InvalidArgument("pageSize must not be negative");
  int64_t after = 0;
  if (!req.page.page_token.empty()) {
    try {
      after = std::stoll(req.page.page_token);
    } catch (const std::exception&) {
      return Status::InvalidArgument("pageToken is not a token this server issued");
    }
  }
  const int size = req.page.page_size == 0 ? 100 : std::min(req.page.page_size, 1000);
  db::JobFilter filter{req.project, req.zone, req.node_id, req.state};
  JobPage page;
  // Labels are filtered here, so a page may hold fewer than pageSize jobs; the token still moves.
  Result<std::vector<db::JobRow>> rows = jobs_.List(filter, after, size + 1);
  if (!rows.ok()) return rows.status();
  if (static_cast<int>(rows->size()) > size) {
    rows->resize(static_cast<size_t>(size));
    page.next_page_token = std::to_string(rows->back().seq);
  }
  for (db::JobRow& row : *rows) {
    json labels = ParseOr(row.labels_json, json::object());
    bool match = true;
    for (const auto& [k, v] : req.labels) match = match && labels.value(k, "") == v;
    if (match) page.jobs.push_back(std::move(row));
  }
  return page;
}

Status JobManager::CancelLocked(const std::string& name, const std::string& reason) {
  auto it = active_.find(name);
  if (it == active_.end()) return Status::Ok();  // terminal or unknown: nothing to do
  {
    std::lock_guard alock(it->second->mu);
    if (it->second->cancel_state.empty()) {
      it->second->cancel_state = "CANCELLED";
      it->second->cancel_reason = reason;
    }
  }
  it->second->cancel = true;
  // A queued job is finished here; a running one by its task at the next op boundary.
  for (auto& [node, q] : queues_) {
    for (auto qi = q.queued.begin(); qi != q.queued.end(); ++qi) {
      if (qi->second != name) continue;
      q.queued.erase(qi);
      ++running_tasks_;  // Finish below runs outside the lock; keep Shutdown waiting for it
      Status s = pool_.Submit("job-cancel", [this, name, reason] {
        Finish(name, "CANCELLED", kExitCancelled, reason, json());
        std::lock_guard lock(mu_);
        if (--running_tasks_ == 0) idle_.notify_all();
      });
      if (!s.ok()) --running_tasks_;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Result<db::JobRow> JobManager::Cancel(const std::string& name) {
  Result<db::JobRow> row = Get(name);
  if (!row.ok() || IsTerminalJobState(row->state)) return row;
  {
    std::lock_guard lock(mu_);
    TPUEMU_RETURN_IF_ERROR(CancelLocked(name, "cancelled by the user"));
  }
  return Get(name);
}

Status JobManager::Delete(const std::string& name) {
  Result<db::JobRow> row = Get(name);
  if (!row.ok()) return row.status();
  if (!IsTerminalJobState(row->state)) {
    return Status::FailedPrecondition("job " + name + " is " + row->state +
                                      "; only a terminal job can be deleted (cancel it first)");
  }
  return store_.Transaction([&](db::Txn& txn) { return jobs_.Delete(txn, name); });
}

Result<std::vector<std::string>> JobManager::Logs(const std::string& name, int64_t offset) const {
  Result<db::JobRow> row = Get(name);
  if (!row.ok()) return row.status();
  Result<std::vector<std::string>> lines = jobs_.Logs(name, offset);
  if (!lines.ok()) return lines.status();
  return std::move(lines).value();
}

Result<json> JobManager::Metrics(const std::string& name) const {
  Result<db::JobRow> row = Get(name);
  if (!row.ok()) return row.status();
  Result<std::vector<db::JobStepRow>> steps = jobs_.Steps(name);
  if (!steps.ok()) return steps.status();
  json out;
  out["job"] = name;
  out["state"] = row->state;
  out["steps"] = json::array();
  // The profile is stored once the program is compiled (job_runner.cpp); the HBM peak is the
  // compiled program's, the same every step.
  json result = ParseOr(row->result_json, json::object());
  if (!result.is_object()) result = json::object();
  const json profile = result.value("profile", json::object());
  for (const db::JobStepRow& s : *steps) {
    json j = {{"step", s.step},
              {"cycles", s.cycles},
              {"emulatedSeconds", s.emulated_seconds},
              {"mxuUtilization", s.mxu_utilization},
              {"flops", s.flops},
              {"emulatedTflops", s.emulated_seconds > 0 ? s.flops / s.emulated_seconds / 1e12 : 0},
              {"hostSeconds", s.host_seconds}};
    if (s.loss) j["loss"] = *s.loss;
    if (profile.contains("hbmPeakBytesPerTensorCore")) {
      j["hbmPeakBytes"] = profile["hbmPeakBytesPerTensorCore"];
    }
    out["steps"].push_back(j);
  }
  out["summary"] = result.value("metrics", json::object());
  out["ops"] = profile.value("ops", json::array());
  return out;
}

void JobManager::OnTerminal(const std::string& name, std::function<void(Result<db::JobRow>)> fn) {
  {
    std::lock_guard lock(mu_);
    if (active_.count(name)) {
      waiters_[name].push_back(std::move(fn));
      return;
    }
  }
  fn(Get(name));
}

void JobManager::OnNodeStateChanged(const Node& node, NodeState) {
  if (node.state != NodeState::kStopping && node.state != NodeState::kDeleting) return;
  const std::string node_name = node.key.Name();
  const std::string reason =
      "node " + node_name + " is " + (node.state == NodeState::kStopping ? "stopping" : "deleting");
  std::lock_guard lock(mu_);
  auto q = queues_.find(node_name);
  if (q == queues_.end()) return;
  std::vector<std::string> names;
  for (const auto& item : q->second.queued) names.push_back(item.second);
  if (!q->second.running.empty()) names.push_back(q->second.running);
  for (const std::string& name : names) (void)CancelLocked(name, reason);
}

void JobManager::Finish(const std::string& name, const std::string& state, int exit_code,
                        const std::string& reason, const json& result) {
  Result<db::JobRow> final_row = Status::Internal("job " + name + " vanished");
  std::string previous;  // set when this call made the job terminal
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    Result<db::JobRow> row = jobs_.Get(txn, name);
    if (!row.ok()) return row.status();
    if (IsTerminalJobState(row->state)) {
      final_row = *row;
      return Status::Ok();
    }
    previous = row->state;
    row->state = state;
    row->exit_code = exit_code;
    row->reason = reason;
    row->end_time = NowRfc3339();
    if (!result.is_null()) row->result_json = result.dump();
    TPUEMU_RETURN_IF_ERROR(jobs_.Update(txn, *row));
    TPUEMU_RETURN_IF_ERROR(jobs_.AppendLog(
        txn, name, state + " (exit code " + std::to_string(exit_code) + "): " + reason));
    final_row = *row;
    return Status::Ok();
  });
  if (!s.ok()) final_row = s;
  if (s.ok() && !previous.empty() && final_row.ok()) NotifyTransition(*final_row, previous);
  std::vector<std::function<void(Result<db::JobRow>)>> waiters;
  {
    std::lock_guard lock(mu_);
    active_.erase(name);
    if (auto w = waiters_.find(name); w != waiters_.end()) {
      waiters = std::move(w->second);
      waiters_.erase(w);
    }
  }
  for (auto& fn : waiters) fn(final_row);
}

void JobManager::AddTransitionObserver(TransitionObserver observer) {
  std::lock_guard lock(observers_mu_);
  if (observer) observers_.push_back(std::move(observer));
}

void JobManager::NotifyTransition(const db::JobRow& job, const std::string& previous) {
  std::lock_guard lock(observers_mu_);
  for (const TransitionObserver& observer : observers_) observer(job, previous);
}

}  // namespace tpuemu::service
