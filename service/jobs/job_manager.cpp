// JobManager's API (job_manager.h): a submission checked, stored and queued on the JobBoard; reads;
// and the jobs a cancel, a node's stop, delete or maintenance ends, written before the caller
// returns (JobBoard::FinishEnded).
#include "service/jobs/job_manager.h"

#include <cstdio>
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
      cache_(cache),
      limits_(limits),
      records_(store),
      board_(records_, waiters_, pool, limits.host_memory_budget_bytes),
      parts_{board_, records_, waiters_, nodes, scheduler, pool, cache, limits_},
      runner_(parts_),
      replicas_(parts_) {
  board_.SetStartRun(
      [this](const std::string& node, const std::string& name) { runner_.Run(node, name); });
  std::random_device rd;
  next_id_ = (uint64_t{rd()} << 20) & 0xffffffffffull;
}

JobManager::~JobManager() { Shutdown(); }

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
      JobBoard::Locked board(board_);
      if (!board.queues().closed()) {
        if (!board.Has(stored->name)) {
          board.Enqueue(
              key.Name(), *stored,
              ActiveJob::Queued(*stored, std::move(spec), host_bytes, std::move(submit_compile)));
        }
        if (board.queues().IsHeld(key.Name())) board.queues().AddLine(stored->name, NodeHeldLine());
        board.Pump(key.Name());
      }
    }
    board_.FlushLines();
  }
  return stored;
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

Result<Job> JobManager::Cancel(const std::string& name) {
  Result<Job> job = Get(name);
  if (!job.ok() || IsTerminal(job->state)) return job;
  bool here = false;
  std::vector<JobBoard::PendingEnd> ended;
  {
    JobBoard::Locked board(board_);
    here = board.Has(name);
    if (here) board.End(name, "cancelled by the user", JobState::kCancelled, &ended);
  }
  // CANCELLED in the store before the reply; a failed write is the reply's error.
  TPUEMU_RETURN_IF_ERROR(board_.FinishEnded(ended));
  if (!here) {
    // Another replica queues or runs it: it ends in the store now; that replica's run stops at
    // its next step, or sooner when the change feed tells it (OnRemoteChange).
    std::optional<JobState> previous;
    Result<Job> ended_elsewhere =
        records_.MarkTerminal(name, Ended(JobState::kCancelled, "cancelled by the user"), json(),
                              &previous, /*any_replica=*/true);
    if (!ended_elsewhere.ok()) return ended_elsewhere.status();
    if (previous) waiters_.Notify(*ended_elsewhere, previous);
    board_.WakeIfTerminal(name);
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
    JobBoard::Locked board(board_);
    if (board.Has(name)) return board.AddWaiter(name, std::move(fn));
  }
  Result<Job> job = Get(name);
  if (!replicas_.shared() || !job.ok() || IsTerminal(job->state)) return fn(std::move(job));
  // Another replica queues or runs it: its terminal state arrives through the change feed.
  JobBoard::Locked(board_).AddWaiter(name, std::move(fn));
  board_.WakeIfTerminal(name);  // it may have ended between the read and the registration
}

void JobManager::OnNodeStateChanged(const Node& node, NodeState) {
  const std::string node_name = node.key.Name();
  if (node.state == NodeState::kCreating || node.state == NodeState::kDeleting ||
      node.state == NodeState::kPreempted) {
    // A new node of that name, or one whose maintenance will never end: not held.
    JobBoard::Locked(board_).queues().Unhold(node_name);
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
  std::vector<JobBoard::PendingEnd> ended;
  {
    JobBoard::Locked board(board_);
    for (const std::string& name : board.queues().Jobs(node_name)) {
      std::shared_ptr<ActiveJob> active = board.Find(name);
      const bool had_retries = active && active->RetriesLeft();
      board.End(name, had_retries && !no_retry.empty() ? reason + "; " + no_retry : reason, state,
                &ended);
    }
  }
  (void)board_.FinishEnded(ended);  // a failed write leaves them to a restart's recovery
}

void JobManager::InterruptNodeJobs(const std::string& node_name, const std::string& reason) {
  std::vector<JobBoard::PendingEnd> ended;
  {
    JobBoard::Locked board(board_);
    board.queues().Hold(node_name);
    const std::string running = board.queues().Running(node_name);
    for (const std::string& name : board.queues().Jobs(node_name)) {
      std::shared_ptr<ActiveJob> active = board.Find(name);
      if (!active) continue;
      if (!active->RetriesLeft()) {
        board.End(name, reason, JobState::kFailed, &ended);
      } else if (name == running) {
        active->cancel.RequestRetry(reason);  // its run re-queues it (JobRunner::Retry)
      } else {
        board.queues().AddLine(name, FaultWaitLine(reason));
      }
    }
  }
  (void)board_.FinishEnded(ended);
  board_.FlushLines();
}

void JobManager::ResumeNode(const std::string& node_name) {
  {
    JobBoard::Locked board(board_);
    if (!board.queues().Unhold(node_name)) return;
    board.Pump(node_name);
  }
  board_.FlushLines();
}

void JobManager::OnRemoteNodeChange(const Node& node) {
  const std::string name = node.key.Name();
  OnNodeStateChanged(node, NodeState::kUnspecified);
  if (node.state != NodeState::kReady) return;
  const bool held = JobBoard::Locked(board_).queues().IsHeld(name);
  if (node.UnderMaintenance() && !held) {
    InterruptNodeJobs(name, "interrupted by host maintenance on node " + node.key.node_id +
                                " until " + node.maintenance.value("until", std::string()));
  } else if (!node.UnderMaintenance() && held) {
    ResumeNode(name);
  }
}

void JobManager::AddTransitionObserver(TransitionObserver observer) {
  waiters_.AddObserver(std::move(observer));
}

}  // namespace tpuemu::service
