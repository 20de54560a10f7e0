// HostCapacity: what this host can boot, as a zone's capacity. Every sandboxed worker holds a
// share of four budgets — a worker of --worker-max, its memory limit, its pids limit and its boot
// disk (the sparse image's full size) — from the create that reserved it until its node is
// deleted, in every state between (a STOPPED or PREEMPTED node keeps all four: its disk is on
// the host, and a start never meets a stockout, as a stopped node keeps its zone's TensorCores).
// A reservation is all or nothing, made under one mutex, so creates racing each other never pass
// a budget together.
//
// Holders are strings: a node's uid, or a queued resource's name (QueuedResourceHolder) holding
// the workers of all its nodes from the moment it starts provisioning until each node's create
// takes its share (Move).
//
// Threads: every member is thread-safe (guarded by mu_).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "base/status.h"

namespace tpuemu::service {

// Each 0 = no such budget.
struct HostBudgets {
  int64_t workers = 0;       // --worker-max
  int64_t memory_bytes = 0;  // --worker-memory-budget-bytes
  int64_t pids = 0;          // --worker-pids-budget
  int64_t disk_bytes = 0;    // --worker-disk-budget-bytes
};

// What one sandboxed worker holds of each budget (its limits; 0 where it has none).
struct WorkerCost {
  int64_t memory_bytes = 0;
  int64_t pids = 0;
  int64_t disk_bytes = 0;
};

// The host's defaults for the budgets (0 when they cannot be read): MemTotal of /proc/meminfo;
// three quarters of the lesser of kernel.pid_max and kernel.threads-max (a quarter stays the
// host's); the free space of the file system that holds `dir` (statvfs, as an unprivileged user
// may use it).
int64_t HostMemoryTotalBytes();
int64_t HostPidsForWorkers();
int64_t FreeBytesAt(const std::string& dir);

// The holder a queued resource's reservation is kept under.
std::string QueuedResourceHolder(const std::string& queued_resource);

class HostCapacity {
 public:
  HostCapacity(HostBudgets budgets, WorkerCost per_worker);

  // Reserves what `workers` more workers hold for `holder`, all or nothing. OK; else
  // RESOURCE_EXHAUSTED whose message names the first budget (in the order of HostBudgets) that
  // cannot take them: its flag, its size, what is held and what was asked.
  Status Reserve(const std::string& holder, int workers);
  // Moves `workers` workers' share from holder `from` to `to`; false (nothing moves) when `from`
  // holds fewer.
  bool Move(const std::string& from, const std::string& to, int workers);
  // Holds `workers` for `holder` without checking the budgets (what existed before a restart).
  void Restore(const std::string& holder, int workers);
  // Gives back everything `holder` holds; the workers freed (0: it held nothing).
  int Release(const std::string& holder);
  // Forgets every reservation (the emulator was reset).
  void Clear();

  int64_t held_workers() const;
  const HostBudgets& budgets() const { return budgets_; }
  const WorkerCost& per_worker() const { return per_worker_; }

 private:
  const HostBudgets budgets_;
  const WorkerCost per_worker_;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> held_;  // workers per holder; guarded by mu_
  int64_t total_ = 0;                    // their sum; guarded by mu_
};

}  // namespace tpuemu::service
