#include "service/observability/utilization_sampler.h"

#include <algorithm>

#include "engine/hardware.h"
#include "service/common/clock.h"

namespace tpuemu::service {
namespace {}  // namespace

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
  while (!stopping_) {
    if (cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                     [&] { return stopping_; })) {
      break;
    }
    lock.unlock();
    (void)SampleNow();  // a busy store skips one sample; the next interval covers the gap
    lock.lock();
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

Status UtilizationSampler::SampleNow() {
  std::lock_guard sample_lock(sample_mu_);
  Result<std::vector<db::NodeBrief>> nodes = stats_.ListAllNodes();
  if (!nodes.ok()) return nodes.status();
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
  for (const db::NodeBrief& node : *nodes) {
    NodeUtilization u;
    u.accelerator_type = node.accelerator_type;
    db::UtilizationRow& row = u.sample;
    row.node = node.name;
    row.time_unix_ms = now;
    if (Result<engine::Slice> slice = engine::Slice::FromAcceleratorType(node.accelerator_type);
        slice.ok()) {
      row.hbm_total_bytes = static_cast<int64_t>(slice->HbmBytes());
    }
    const double node_cores = static_cast<double>(std::max<int64_t>(1, node.tensorcores));
    double busy_ms = 0;
    for (const Busy& b : busy[node.name]) {
      busy_ms += static_cast<double>(b.ms);
      Result<db::JobProgramRow> program = programs_.Get(b.job);
      const double cores = program.ok() ? static_cast<double>(program->tensorcores) : 1.0;
      const double share = static_cast<double>(b.ms) / static_cast<double>(interval) *
                           std::min(1.0, cores / node_cores);
      Result<double> mxu = stats_.MeanStepMxuUtilization(b.job);
      row.tensorcore_utilization += share;
      row.mxu_utilization += share * (mxu.ok() ? *mxu : 0.0);
      if (program.ok() && running_now[node.name] == b.job) {
        row.hbm_used_bytes = program->hbm_peak_bytes_per_tensorcore * program->tensorcores;
      }
    }
    row.duty_cycle = std::min(1.0, busy_ms / static_cast<double>(interval));
    row.tensorcore_utilization = std::clamp(row.tensorcore_utilization, 0.0, 1.0);
    row.mxu_utilization = std::clamp(row.mxu_utilization, 0.0, 1.0);
    rows.push_back(std::move(u));
  }
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    for (const NodeUtilization& u : rows) TPUEMU_RETURN_IF_ERROR(samples_.Append(txn, u.sample));
    Result<int64_t> pruned = samples_.PruneBefore(txn, now - options_.retention_seconds * 1000);
    return pruned.ok() ? Status::Ok() : pruned.status();
  });
  if (!s.ok()) return s;
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
}

}  // namespace tpuemu::service
