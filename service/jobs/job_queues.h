// JobQueues: which job each node starts next — the per-node queues, the running slots, the
// host-memory admission and the holds, with no store, pool or node behind them. JobBoard
// (job_board.h) asks it what to start and does the starting; this class only decides.
//
// Order: a node runs one job at a time; its queued jobs start by priority (higher first), then
// submission order (the store's seq). StartNext moves a node's next job into its running slot,
// unless the node is held (host maintenance, Hold), blocked (its last claim found another
// replica's job running there: Unclaim, lifted by Unblock/UnblockAll), already running a job,
// the queues are closed (shutdown began), or the job does not fit in host memory.
// Host memory (host_memory_budget.h): a job starts only once its planned peak bytes fit beside
// the running jobs' reservations in the daemon-wide budget, and never ahead of an older (lower
// seq) job that waits for memory on any node: the oldest waiting job is admitted first
// (MemoryWaiters). The running job's bytes stay reserved until EndRun or Unclaim. The first time a
// job waits, its wait line ("waiting for host memory: …") goes to the outbox; the caller writes
// the outbox's lines (TakeLines) outside its lock.
// A job is named by its full name and lives in one place at a time; Withdraw says where.
// Threads: not thread-safe; it is reached only through a JobBoard::Locked (job_board.h). The one
// exception is reserved_host_bytes(), which any thread may read (the budget has its own leaf lock).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "service/jobs/host_memory_budget.h"

namespace tpuemu::service {

class JobQueues {
 public:
  // A job as its queue orders and admits it.
  struct Entry {
    std::string name;
    int64_t priority = 0;
    int64_t seq = 0;         // submission order (the store's)
    int64_t host_bytes = 0;  // planned peak; 0 = not planned (admitted whatever the budget)
  };
  // Where a job is: queued or running on `node`; `next`: a queued job that was the node's next.
  struct Place {
    std::string node;
    bool running = false;
    bool next = false;
  };

  // budget_bytes <= 0: no host-memory budget (every job fits).
  explicit JobQueues(int64_t budget_bytes) : budget_(budget_bytes) {}

  void Push(const std::string& node, const Entry& job);
  // Starts the node's next job if it may start now: it leaves the queue for the running slot
  // with its bytes reserved, and its name is returned. Otherwise nullopt; a next job that waits
  // for memory is then counted among the waiters (and its wait line is in the outbox, once).
  std::optional<std::string> StartNext(const std::string& node);
  // The node's running job ended: the slot is free and its bytes are returned to the budget.
  void EndRun(const std::string& node);
  // The running job's claim found the node busy with another replica's job: as EndRun, then the
  // job goes back to its queue (`requeue`; its wait line is not written again) and the node is
  // blocked.
  void Unclaim(const std::string& node, bool requeue);
  // Where job `name` is; a queued one leaves its queue. A running one keeps its slot (its run
  // ends it: EndRun). nullopt when it is neither queued nor running.
  std::optional<Place> Withdraw(const std::string& name);

  // The node's jobs: the queued ones in start order, then the running one.
  std::vector<std::string> Jobs(const std::string& node) const;
  std::string Running(const std::string& node) const;  // empty when none
  // Every node that ever had a queue.
  std::vector<std::string> Nodes() const;
  // The nodes whose next job waits for host memory, oldest job first.
  std::vector<std::string> MemoryWaiters() const;

  // Holds: a held node starts no job (host maintenance) until Unhold, which says whether it
  // was held.
  void Hold(const std::string& node) { held_.insert(node); }
  bool Unhold(const std::string& node) { return held_.erase(node) > 0; }
  bool IsHeld(const std::string& node) const { return held_.count(node) > 0; }
  void Unblock(const std::string& node);
  // Unblocks every blocked node and returns them.
  std::vector<std::string> UnblockAll();

  // The outbox: log lines (job name, line) to write once the caller released its lock.
  void AddLine(const std::string& job, std::string line);
  std::vector<std::pair<std::string, std::string>> TakeLines();

  // Shutdown began: no job starts any more (irreversible).
  void Close() { closed_ = true; }
  bool closed() const { return closed_; }
  // Forgets every queue, running slot, waiter and hold (the runs have ended); keeps the outbox
  // for its writers and the reservations (each run returned its own).
  void Clear();

  // Bytes the running jobs reserve (0 without a budget); may be read from any thread.
  int64_t reserved_host_bytes() const { return budget_.reserved_bytes(); }

 private:
  struct Queued {
    Entry job;
    bool wait_logged = false;  // its host-memory wait line is in the outbox (or written)
  };
  struct NodeQueue {
    std::map<std::pair<int64_t, int64_t>, Queued> queued;  // (-priority, seq) -> job
    std::optional<Queued> running;
  };
  // Whether `job` may start now: reserves its bytes unless an older job waits for memory or they
  // do not fit; else counts it among the waiters and writes its wait line (once).
  bool Admit(const std::string& node, Queued& job);

  std::map<std::string, NodeQueue> queues_;            // node name -> its queue
  std::set<std::pair<int64_t, std::string>> waiting_;  // (job seq, node): next jobs short of memory
  std::set<std::string> held_;                         // nodes under maintenance
  std::set<std::string> blocked_;  // nodes whose last claim lost to another replica's job
  std::vector<std::pair<std::string, std::string>> lines_;  // (job, line): the outbox
  bool closed_ = false;
  HostMemoryBudget budget_;
};

}  // namespace tpuemu::service
