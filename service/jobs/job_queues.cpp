#include "service/jobs/job_queues.h"

#include <algorithm>

#include "service/jobs/job_log_lines.h"

namespace tpuemu::service {

void JobQueues::Push(const std::string& node, const Entry& job) {
  queues_[node].queued.emplace(std::pair(-job.priority, job.seq), Queued{job});
}

std::optional<std::string> JobQueues::StartNext(const std::string& node) {
  NodeQueue& q = queues_[node];
  // The node's waiting entry, if any, is re-made below for its current next job.
  std::erase_if(waiting_, [&](const auto& waiter) { return waiter.second == node; });
  if (closed_ || blocked_.count(node) || held_.count(node) || q.running || q.queued.empty()) {
    return std::nullopt;
  }
  const auto next = q.queued.begin();
  if (!Admit(node, next->second)) return std::nullopt;
  q.running = std::move(next->second);
  q.queued.erase(next);
  return q.running->job.name;
}

bool JobQueues::Admit(const std::string& node, Queued& job) {
  const bool older_waits = !waiting_.empty() && waiting_.begin()->first < job.job.seq;
  if (!older_waits && budget_.TryReserve(job.job.host_bytes)) return true;
  waiting_.insert({job.job.seq, node});
  if (!job.wait_logged) {
    job.wait_logged = true;
    lines_.push_back({job.job.name, HostMemoryWaitLine(job.job.host_bytes, budget_.reserved_bytes(),
                                                       budget_.budget_bytes())});
  }
  return false;
}

void JobQueues::EndRun(const std::string& node) {
  NodeQueue& q = queues_[node];
  if (q.running) budget_.Release(q.running->job.host_bytes);
  q.running.reset();
}

void JobQueues::Unclaim(const std::string& node, bool requeue) {
  NodeQueue& q = queues_[node];
  if (q.running) {
    budget_.Release(q.running->job.host_bytes);
    if (requeue) {
      const Entry& job = q.running->job;
      q.queued.emplace(std::pair(-job.priority, job.seq), std::move(*q.running));
    }
  }
  q.running.reset();
  blocked_.insert(node);
}

std::optional<JobQueues::Place> JobQueues::Withdraw(const std::string& name) {
  for (auto& [node, q] : queues_) {
    if (q.running && q.running->job.name == name) return Place{node, /*running=*/true};
    for (auto it = q.queued.begin(); it != q.queued.end(); ++it) {
      if (it->second.job.name != name) continue;
      const bool next = it == q.queued.begin();
      q.queued.erase(it);
      return Place{node, /*running=*/false, next};
    }
  }
  return std::nullopt;
}

std::vector<std::string> JobQueues::Jobs(const std::string& node) const {
  std::vector<std::string> names;
  auto q = queues_.find(node);
  if (q == queues_.end()) return names;
  for (const auto& [key, job] : q->second.queued) names.push_back(job.job.name);
  if (q->second.running) names.push_back(q->second.running->job.name);
  return names;
}

std::string JobQueues::Running(const std::string& node) const {
  auto q = queues_.find(node);
  return q == queues_.end() || !q->second.running ? "" : q->second.running->job.name;
}

std::vector<std::string> JobQueues::Nodes() const {
  std::vector<std::string> nodes;
  for (const auto& [node, q] : queues_) nodes.push_back(node);
  return nodes;
}

std::vector<std::string> JobQueues::MemoryWaiters() const {
  std::vector<std::string> nodes;
  for (const auto& [seq, node] : waiting_) nodes.push_back(node);
  return nodes;
}

void JobQueues::Unblock(const std::string& node) { blocked_.erase(node); }

std::vector<std::string> JobQueues::UnblockAll() {
  std::vector<std::string> nodes(blocked_.begin(), blocked_.end());
  blocked_.clear();
  return nodes;
}

void JobQueues::AddLine(const std::string& job, std::string line) {
  lines_.push_back({job, std::move(line)});
}

std::vector<std::pair<std::string, std::string>> JobQueues::TakeLines() {
  return std::exchange(lines_, {});
}

void JobQueues::Clear() {
  queues_.clear();
  waiting_.clear();
  held_.clear();
  blocked_.clear();
}

}  // namespace tpuemu::service
