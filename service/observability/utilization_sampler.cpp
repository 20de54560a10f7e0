#include "service/observability/utilization_sampler.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "db/job_repository.h"
#include "engine/hardware/hardware.h"
#include "service/common/clock.h"

namespace tpuemu::service {
UtilizationSampler::UtilizationSampler(db::Store& store, UtilizationOptions options)
    : store_(store),
      options_(std::move(options)),
      samples_(store),
      stats_(store),
      programs_(store) {
  last_sample_ms_ = Now();
}

UtilizationSampler::~UtilizationSampler() { Stop(); }

int64_t UtilizationSampler::Now() const {
  return options_.now_ms ? options_.now_ms() : NowUnixMs();
}

void UtilizationSampler::Start() {
  std::lock_guard lock(mu_);
  if (options_.interval_ms <= 0 || thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Loop(); });
}

void UtilizationSampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void UtilizationSampler::Loop() {
  std::unique_lock lock(mu_);
  bool leading = false;
  while (!stopping_) {
    if (cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                     [&] { return stopping_; })) {
      break;
    }
    lock.unlock();
    const bool leads = !leads_ || leads_();
    if (leads && !leading && leads_) SeedRunning();
    leading = leads;
    if (leads) (void)SampleNow();  // a busy store skips one sample; the next interval covers it
    lock.lock();
  }
}

void UtilizationSampler::SeedRunning() {
  Result<std::vector<db::JobRow>> rows = db::JobRepository(store_).ListInState("RUNNING");
  if (!rows.ok()) return;
  const int64_t now = Now();
  std::lock_guard lock(mu_);
  for (const db::JobRow& row : *rows) {
    const std::string node =
        "projects/" + row.project + "/locations/" + row.zone + "/nodes/" + row.node_id;
    if (!running_.count(node)) running_[node] = Running{row.name, now};
  }
}

void UtilizationSampler::OnJobStateChanged(const Job& job, std::optional<JobState> previous) {
  const std::string node = job.NodeName();
  const int64_t now = Now();
  std::lock_guard lock(mu_);
  if (job.state == JobState::kRunning) {
    running_[node] = Running{job.name, now};
    return;
  }
  if (previous != JobState::kRunning) return;
  auto it = running_.find(node);
  if (it == running_.end() || it->second.job != job.name) return;
  const int64_t from = std::max(it->second.since_ms, last_sample_ms_);
  ended_[node].push_back(Busy{job.name, std::max<int64_t>(0, now - from)});
  running_.erase(it);
}

Status UtilizationSampler::RefreshNodes(bool full) {
  if (!full) {
    const int64_t after = nodes_.empty() ? 0 : nodes_.back().seq;
    Result<db::StatsRepository::NodesAfter> fresh = stats_.ListNodesAfter(after, 0);
    if (!fresh.ok()) return fresh.status();
    // Nothing deleted since the last pass when the count is what we knew plus what is new.
    if (fresh->total == static_cast<int64_t>(nodes_.size() + fresh->nodes.size())) {
      for (db::NodeBrief& node : fresh->nodes) nodes_.push_back(std::move(node));
      return Status::Ok();
    }
  }
  std::vector<db::NodeBrief> all;
  constexpr int kPage = 1000;
  for (int64_t after = 0;;) {
    Result<db::StatsRepository::NodesAfter> page = stats_.ListNodesAfter(after, kPage);
    if (!page.ok()) return page.status();
    for (db::NodeBrief& node : page->nodes) all.push_back(std::move(node));
    if (static_cast<int>(page->nodes.size()) < kPage) break;
    after = all.back().seq;
  }
  nodes_ = std::move(all);
  return Status::Ok();
}

int64_t UtilizationSampler::HbmTotal(const std::string& accelerator_type) {
  auto it = hbm_by_type_.find(accelerator_type);
  if (it != hbm_by_type_.end()) return it->second;
  int64_t bytes = 0;
  if (Result<engine::Slice> slice = engine::Slice::FromAcceleratorType(accelerator_type);
      slice.ok()) {
    bytes = static_cast<int64_t>(slice->HbmBytes());
  }
  hbm_by_type_.emplace(accelerator_type, bytes);
  return bytes;
}

Status UtilizationSampler::SampleNow() {
  std::lock_guard sample_lock(sample_mu_);
  uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    generation = generation_;
  }
  const bool reload = loaded_generation_ != generation;
  if (reload) {
    // After a start or a reset: the open runs the store holds are what this pass compares with.
    Result<std::unordered_map<std::string, db::UtilizationRow>> open = samples_.OpenRuns();
    if (!open.ok()) return open.status();
    open_runs_ = std::move(open).value();
  }
  TPUEMU_RETURN_IF_ERROR(RefreshNodes(reload));
  loaded_generation_ = generation;
  const int64_t now = Now();
  int64_t interval = 0;
  std::map<std::string, std::vector<Busy>> busy;
  std::map<std::string, std::string> running_now;  // node -> job
  {
    std::lock_guard lock(mu_);
    interval = std::max<int64_t>(1, now - last_sample_ms_);
    busy = std::move(ended_);
    ended_.clear();
    for (const auto& [node, r] : running_) {
      busy[node].push_back(
          Busy{r.job, std::max<int64_t>(0, now - std::max(r.since_ms, last_sample_ms_))});
      running_now[node] = r.job;
    }
    last_sample_ms_ = now;
  }
  std::vector<NodeUtilization> rows;
  rows.reserve(nodes_.size());
  std::vector<db::UtilizationRow> changed;
  size_t still_open = 0;  // nodes of open_runs_ sampled again
  for (const db::NodeBrief& node : nodes_) {
    NodeUtilization u;
    u.accelerator_type = node.accelerator_type;
    db::UtilizationRow& row = u.sample;
    row.node = node.name;
    row.time_unix_ms = now;
    row.hbm_total_bytes = HbmTotal(node.accelerator_type);
    const double node_cores = static_cast<double>(std::max<int64_t>(1, node.tensorcores));
    double busy_ms = 0;
    auto node_busy = busy.find(node.name);
    auto node_running = running_now.find(node.name);
    static const std::vector<Busy> kIdle;
    for (const Busy& b : node_busy == busy.end() ? kIdle : node_busy->second) {
      busy_ms += static_cast<double>(b.ms);
      Result<db::JobProgramRow> program = programs_.Get(b.job);
      const double cores = program.ok() ? static_cast<double>(program->tensorcores) : 1.0;
      const double share = static_cast<double>(b.ms) / static_cast<double>(interval) *
                           std::min(1.0, cores / node_cores);
      Result<double> mxu = stats_.MeanStepMxuUtilization(b.job);
      row.tensorcore_utilization += share;
      row.mxu_utilization += share * (mxu.ok() ? *mxu : 0.0);
      if (program.ok() && node_running != running_now.end() && node_running->second == b.job) {
        row.hbm_used_bytes = program->hbm_peak_bytes_per_tensorcore * program->tensorcores;
      }
    }
    row.duty_cycle = std::min(1.0, busy_ms / static_cast<double>(interval));
    row.tensorcore_utilization = std::clamp(row.tensorcore_utilization, 0.0, 1.0);
    row.mxu_utilization = std::clamp(row.mxu_utilization, 0.0, 1.0);
    auto open = open_runs_.find(node.name);
    if (open != open_runs_.end()) ++still_open;
    if (open == open_runs_.end() || !db::SameUtilization(open->second, row)) changed.push_back(row);
    rows.push_back(std::move(u));
  }
  // Open runs of nodes no longer in the store end at this pass.
  std::vector<std::string> ended;
  if (still_open < open_runs_.size()) {
    std::unordered_set<std::string_view> present;
    present.reserve(nodes_.size());
    for (const db::NodeBrief& node : nodes_) present.insert(node.name);
    for (const auto& entry : open_runs_) {
      if (!present.contains(entry.first)) ended.push_back(entry.first);
    }
  }
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    TPUEMU_RETURN_IF_ERROR(samples_.RecordTick(txn, now, changed, ended));
    Result<int64_t> pruned = samples_.PruneBefore(txn, now - options_.retention_seconds * 1000);
    return pruned.ok() ? Status::Ok() : pruned.status();
  });
  if (!s.ok()) return s;
  for (const std::string& node : ended) open_runs_.erase(node);
  for (db::UtilizationRow& row : changed) {
    std::string node = row.node;
    open_runs_.insert_or_assign(std::move(node), std::move(row));
  }
  std::lock_guard lock(mu_);
  latest_ = std::move(rows);
  return Status::Ok();
}

Result<std::vector<db::UtilizationRow>> UtilizationSampler::History(const std::string& node,
                                                                    int64_t window_seconds) const {
  Result<std::vector<db::UtilizationRow>> rows = samples_.List(node, Now() - window_seconds * 1000);
  if (!rows.ok()) return rows.status();
  return std::move(rows).value();
}

std::vector<NodeUtilization> UtilizationSampler::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

void UtilizationSampler::Reset() {
  std::lock_guard lock(mu_);
  running_.clear();
  ended_.clear();
  latest_.clear();
  last_sample_ms_ = Now();
  ++generation_;  // the next pass reads the nodes and open runs again
}

}  // namespace tpuemu::service
