// JobManager's API (job_manager.h) and its queueing: a submission checked and stored, its
// ActiveJob queued in JobQueues, the picked job started on a pool task (PumpLocked), and the jobs a
// cancel, a node's stop, delete or maintenance ends, written before the caller returns.
#include "service/jobs/job_manager.h"

#include <cstdio>
#include <map>
#include <random>
#include <utility>

#include "service/common/clock.h"
#include "service/jobs/job_log_lines.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

json ParseOr(const std::optional<std::string>& text, json fallback) {
  if (!text) return fallback;
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

}  // namespace

JobManager::JobManager(db::Store& store, NodeManager& nodes, Scheduler& scheduler,
                       engine::Pool& pool, engine::CompileCache& cache, JobLimits limits)
    : nodes_(nodes),
      scheduler_(scheduler),
      pool_(pool),
      cache_(cache),
      limits_(limits),
      records_(store),
      queues_(limits.host_memory_budget_bytes) {
  std::random_device rd;
  next_id_ = (uint64_t{rd()} << 20) & 0xffffffffffull;
}

JobManager::~JobManager() { Shutdown(); }

void JobManager::Interrupt() {
  std::lock_guard lock(mu_);
  queues_.Close();
  for (auto& [name, active] : active_) active->cancel.Interrupt();
}

void JobManager::Shutdown() {
  Interrupt();
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return running_tasks_ == 0; });
  queues_.Clear();
  active_.clear();
}

Result<Job> JobManager::Submit(JobSubmission submission, bool* created) {
  const NodeKey& key = submission.node;
  const std::string& job_id = submission.job_id;
  Result<JobSpec> spec = std::move(submission.spec);
  Result<Node> node = nodes_.Get(key);
  if (!node.ok()) return node.status();
  if (node->state != NodeState::kReady) {
    return Status::FailedPrecondition("node " + key.Name() + " is " +
                                      std::string(NodeStateName(node->state)) +
                                      "; only a READY node accepts jobs");
  }
  if (spec->hlo) {
    Result<std::shared_ptr<const HloPrice>> price =
        PriceHloJobOnNode(*spec->hlo, node->type, spec->precision);
    if (!price.ok()) return price.status();
    spec->hlo_price = std::move(*price);
  } else if (spec->cores > node->type.tensorcores) {
    return Status::InvalidArgument("cores must be 1.." + std::to_string(node->type.tensorcores) +
                                   " (the TensorCores of " + node->type.name + ")");
  }
  std::optional<SubmitCompile> submit_compile;
  const int64_t host_bytes = PlanJobHostBytes(cache_, limits_, *spec, *node, &submit_compile);
  if (Status fits = CheckJobHostBytes(host_bytes, limits_); !fits.ok()) return fits;
  Job job;
  job.project = key.project;
  job.zone = key.zone;
  job.node_id = key.node_id;
  if (!job_id.empty()) {
    job.job_id = job_id;
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "job-%010llx",
                  static_cast<unsigned long long>(next_id_.fetch_add(1)));
    job.job_id = buf;
  }
  job.name = key.Name() + "/jobs/" + job.job_id;
  job.state = JobState::kQueued;
  job.priority = spec->priority;
  job.labels_json = json(spec->labels).dump();
  CanonicalSpec canonical = Canonicalize(*spec);
  job.spec_json = std::move(canonical.json);
  job.spec_hash = std::move(canonical.hash);
  if (!spec->request_id.empty()) job.request_id = spec->request_id;
  job.max_retries = spec->max_retries;
  job.create_time = NowRfc3339();
  bool inserted = false;
  Result<Job> stored = records_.InsertOrReplay(std::move(job), &inserted);
  if (!stored.ok()) return stored.status();
  if (created) *created = inserted;
  if (inserted) {
    waiters_.Notify(*stored, std::nullopt);
    {
      std::lock_guard lock(mu_);
      if (!queues_.closed()) {
        if (!active_.count(stored->name)) {
          EnqueueLocked(
              key.Name(), *stored,
              ActiveJob::Queued(*stored, std::move(spec), host_bytes, std::move(submit_compile)));
        }
        if (queues_.IsHeld(key.Name())) queues_.AddLine(stored->name, NodeHeldLine());
        PumpLocked(key.Name());
      }
    }
    FlushLines();
  }
  return stored;
}

// Queues `job` on `node` with its in-memory half, which replaces the one it had (a retry re-queues
// a job whose run still holds the old one).
void JobManager::EnqueueLocked(const std::string& node, const Job& job,
                               std::shared_ptr<ActiveJob> active) {
  queues_.Push(node, {job.name, job.priority, job.seq, active->host_bytes});
  active_[job.name] = std::move(active);
}

// Starts the job JobQueues picks for `node` (if any) on a pool task; the task counts for Shutdown.
void JobManager::PumpLocked(const std::string& node) {
  std::optional<std::string> name = queues_.StartNext(node);
  if (!name) return;
  ++running_tasks_;
  Status s = pool_.Submit(node, [this, node, name = *name] { Run(node, name); });
  if (!s.ok()) {
    --running_tasks_;
    queues_.EndRun(node);
  }
}

// Pumps the nodes whose next job waits for host memory, oldest job first.
void JobManager::PumpMemoryWaitersLocked() {
  for (const std::string& node : queues_.MemoryWaiters()) PumpLocked(node);
}

// Writes the lines JobQueues' outbox holds; called without mu_ held by every path that pumps (the
// writes stay out of mu_ and off the pool tasks, and happen before that path returns).
void JobManager::FlushLines() {
  std::vector<std::pair<std::string, std::string>> lines;
  {
    std::lock_guard lock(mu_);
    lines = queues_.TakeLines();
  }
  for (const auto& [name, line] : lines) (void)records_.AppendLine(name, line);
}

Result<Job> JobManager::Get(const std::string& name) const { return records_.Get(name); }

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
  JobPage page;
  if (req.unknown_state) return page;
  const int size = req.page.page_size == 0 ? 100 : std::min(req.page.page_size, 1000);
  db::JobFilter filter{req.project, req.zone, req.node_id,
                       req.state ? std::string(JobStateName(*req.state)) : ""};
  // Labels are filtered here, so a page may hold fewer than pageSize jobs; the token still moves.
  Result<std::vector<Job>> jobs = records_.List(filter, after, size + 1);
  if (!jobs.ok()) return jobs.status();
  if (static_cast<int>(jobs->size()) > size) {
    jobs->resize(static_cast<size_t>(size));
    page.next_page_token = std::to_string(jobs->back().seq);
  }
  for (Job& job : *jobs) {
    bool match = true;
    if (!req.labels.empty()) {
      json labels = ParseOr(job.labels_json, json::object());
      for (const auto& [k, v] : req.labels) match = match && labels.value(k, "") == v;
    }
    if (match) page.jobs.push_back(std::move(job));
  }
  return page;
}

// Requests the end of queued or running job `name` in `state` with `reason`, and appends it to
// *ended (it counts as a task Shutdown waits for until FinishEnded wrote it). A queued job leaves
// its queue here.
void JobManager::CancelLocked(const std::string& name, const std::string& reason, JobState state,
                              std::vector<PendingEnd>* ended) {
  auto it = active_.find(name);
  if (it == active_.end()) return;  // terminal or unknown: nothing to do
  it->second->cancel.Request(state, reason);
  // Written terminal by the caller before it replies (FinishEnded), even while a queued job
  // waits for host memory or a running one is inside a large op: that run stops at its next op
  // boundary, finds the job ended and writes nothing more.
  std::optional<JobQueues::Place> place = queues_.Withdraw(name);
  if (!place) return;
  ++running_tasks_;  // Shutdown waits for the write
  ended->push_back({name, place->node, Ended(state, reason), place->running, place->next});
}

// Writes the terminal state of each job in `ended` on the caller's thread, once mu_ is released
// and before the caller returns, so the reply to a cancel, a stop or a delete (and a kill -9 right
// after it) finds the job ended in the store; then lets the nodes of the queued ones start their
// next jobs. Returns the store's error when the write failed.
Status JobManager::FinishEnded(const std::vector<PendingEnd>& ended) {
  if (ended.empty()) return Status::Ok();
  // One transaction for all of them: a node's stop or delete ends its whole queue at once.
  std::vector<std::pair<std::string, JobOutcome>> ends;
  for (const PendingEnd& end : ended) ends.push_back({end.name, end.outcome});
  Result<std::vector<EndedJob>> stored = records_.MarkTerminal(ends);
  std::map<std::string, Result<Job>> finals;  // what each queued job's waiters are told
  if (stored.ok()) {
    for (const EndedJob& e : *stored) {
      if (e.previous) waiters_.Notify(e.job, e.previous);
      finals.emplace(e.job.name, e.job);
    }
  }
  for (const PendingEnd& end : ended) {
    if (!end.running && !finals.count(end.name)) {
      finals.emplace(end.name, stored.ok() ? records_.Get(end.name) : Result<Job>(stored.status()));
    }
  }
  std::vector<std::pair<std::function<void(Result<Job>)>, Result<Job>>> wake;
  {
    std::lock_guard lock(mu_);
    for (const PendingEnd& end : ended) {
      // A running job keeps its in-memory half (and its node here) until its run stopped.
      if (end.running) continue;
      active_.erase(end.name);
      for (auto& fn : waiters_.Take(end.name)) wake.push_back({std::move(fn), finals.at(end.name)});
    }
    // A job that waited for host memory no longer holds back its node or the younger waiters.
    for (const PendingEnd& end : ended) {
      if (end.was_next) PumpLocked(end.node);
    }
    PumpMemoryWaitersLocked();
  }
  for (auto& [fn, job] : wake) fn(std::move(job));
  FlushLines();
  std::lock_guard lock(mu_);
  running_tasks_ -= static_cast<int>(ended.size());
  if (running_tasks_ == 0) idle_.notify_all();
  return stored.status();
}

Result<Job> JobManager::Cancel(const std::string& name) {
  Result<Job> job = Get(name);
  if (!job.ok() || IsTerminal(job->state)) return job;
  bool here = false;
  std::vector<PendingEnd> ended;
  {
    std::lock_guard lock(mu_);
    here = active_.count(name) > 0;
    if (here) CancelLocked(name, "cancelled by the user", JobState::kCancelled, &ended);
  }
  // CANCELLED in the store before the reply; a failed write is the reply's error.
  TPUEMU_RETURN_IF_ERROR(FinishEnded(ended));
  if (!here) {
    // Another replica queues or runs it: it ends in the store now; that replica's run stops at
    // its next step, or sooner when the change feed tells it (OnRemoteChange).
    std::optional<JobState> previous;
    Result<Job> ended_elsewhere =
        records_.MarkTerminal(name, Ended(JobState::kCancelled, "cancelled by the user"), json(),
                              &previous, /*any_replica=*/true);
    if (!ended_elsewhere.ok()) return ended_elsewhere.status();
    if (previous) waiters_.Notify(*ended_elsewhere, previous);
    WakeIfTerminal(name);
  }
  return Get(name);
}

Status JobManager::Delete(const std::string& name) {
  Result<Job> job = Get(name);
  if (!job.ok()) return job.status();
  if (!IsTerminal(job->state)) {
    return Status::FailedPrecondition("job " + name + " is " +
                                      std::string(JobStateName(job->state)) +
                                      "; only a terminal job can be deleted (cancel it first)");
  }
  return records_.Delete(name);
}

Result<std::vector<std::string>> JobManager::Logs(const std::string& name, int64_t offset) const {
  Result<Job> job = Get(name);
  if (!job.ok()) return job.status();
  return records_.Logs(name, offset);
}

Result<json> JobManager::Metrics(const std::string& name) const {
  Result<Job> job = Get(name);
  if (!job.ok()) return job.status();
  Result<std::vector<db::JobStepRow>> steps = records_.Steps(name);
  if (!steps.ok()) return steps.status();
  json out;
  out["job"] = name;
  out["state"] = std::string(JobStateName(job->state));
  out["steps"] = json::array();
  // The profile is stored once the program is compiled (JobRecords::RecordCompile); the HBM peak
  // is the compiled program's, the same every step.
  json result = ParseOr(job->result_json, json::object());
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

void JobManager::OnTerminal(const std::string& name, std::function<void(Result<Job>)> fn) {
  {
    std::lock_guard lock(mu_);
    if (active_.count(name)) {
      waiters_.Add(name, std::move(fn));
      return;
    }
  }
  Result<Job> job = Get(name);
  if (!shared_ || !job.ok() || IsTerminal(job->state)) return fn(std::move(job));
  // Another replica queues or runs it: its terminal state arrives through the change feed.
  {
    std::lock_guard lock(mu_);
    waiters_.Add(name, std::move(fn));
  }
  WakeIfTerminal(name);  // it may have ended between the read and the registration
}

void JobManager::OnNodeStateChanged(const Node& node, NodeState) {
  const std::string node_name = node.key.Name();
  if (node.state == NodeState::kCreating || node.state == NodeState::kDeleting ||
      node.state == NodeState::kPreempted) {
    // A new node of that name, or one whose maintenance will never end: not held.
    std::lock_guard lock(mu_);
    queues_.Unhold(node_name);
  }
  if (node.state == NodeState::kPreempted) {
    EndNodeJobs(node_name, JobState::kFailed, "node " + node_name + " was preempted",
                "a PREEMPTED node can only be deleted, so the job's retries (maxRetries) cannot "
                "run there");
    return;
  }
  if (node.state == NodeState::kDeleting) {
    EndNodeJobs(node_name, JobState::kCancelled, "node " + node_name + " is deleting",
                "the node will not run jobs again, so the job's retries (maxRetries) cannot run");
    return;
  }
  if (node.state != NodeState::kStopping) return;
  EndNodeJobs(node_name, JobState::kCancelled, "node " + node_name + " is stopping");
}

void JobManager::EndNodeJobs(const std::string& node_name, JobState state,
                             const std::string& reason, const std::string& no_retry) {
  std::vector<PendingEnd> ended;
  {
    std::lock_guard lock(mu_);
    for (const std::string& name : queues_.Jobs(node_name)) {
      auto it = active_.find(name);
      const bool had_retries = it != active_.end() && it->second->RetriesLeft();
      CancelLocked(name, had_retries && !no_retry.empty() ? reason + "; " + no_retry : reason,
                   state, &ended);
    }
  }
  (void)FinishEnded(ended);  // a failed write leaves them to a restart's recovery
}

void JobManager::InterruptNodeJobs(const std::string& node_name, const std::string& reason) {
  std::vector<PendingEnd> ended;
  {
    std::lock_guard lock(mu_);
    queues_.Hold(node_name);
    const std::string running = queues_.Running(node_name);
    for (const std::string& name : queues_.Jobs(node_name)) {
      auto it = active_.find(name);
      if (it == active_.end()) continue;
      if (!it->second->RetriesLeft()) {
        CancelLocked(name, reason, JobState::kFailed, &ended);
      } else if (name == running) {
        it->second->cancel.RequestRetry(reason);  // its run re-queues it (Retry)
      } else {
        queues_.AddLine(name, FaultWaitLine(reason));
      }
    }
  }
  (void)FinishEnded(ended);
  FlushLines();
}

void JobManager::ResumeNode(const std::string& node_name) {
  {
    std::lock_guard lock(mu_);
    if (!queues_.Unhold(node_name)) return;
    PumpLocked(node_name);
  }
  FlushLines();
}

void JobManager::AddTransitionObserver(TransitionObserver observer) {
  waiters_.AddObserver(std::move(observer));
}

}  // namespace tpuemu::service
