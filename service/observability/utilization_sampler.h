// UtilizationSampler: per-node utilization history, one sample per node every interval, stored in
// SQLite as changes (db/utilization_repository.h: a tick per pass, a row only when a node's sample
// differs from its previous one, so idle nodes cost nothing) and pruned past the retention.
//
// A sample covers (previous sample, now]:
//  * dutyCycle: the fraction of the interval the node had a job RUNNING (Cloud Monitoring's
//    accelerator/duty_cycle, as a 0..1 ratio).
//  * tensorcoreUtilization: the fraction of the node's TensorCores the running jobs occupied,
//    weighted by the time each ran (a 1-core job on a v4-8's 4 TensorCores counts 0.25).
//  * mxuUtilization: the same, weighted by each job's mean step MXU utilization (its job_steps:
//    flops / (cycles x cores x peak)). Both are 0 when the node is idle.
//  * hbmUsedBytes: the peak HBM of the program running at sample time x the TensorCores it uses
//    (0 when idle); hbmTotalBytes: the slice's HBM.
// Job activity comes from JobManager's transition observer (OnJobStateChanged); program facts
// from job_programs. Nodes are those in the store at sample time: the sampler keeps their list
// and reads only the nodes created since the last pass, unless the store's node count says some
// went (then it reads them all again, in pages, so readers get the store in between).
// Timing: Start() runs SampleNow() every interval_ms on a thread (0 = never; tests call SampleNow
// themselves). The clock is injectable (now_ms). Threads: every public method may be called from
// any thread; job activity and the latest samples are guarded by mu_; SampleNow calls are
// serialised by sample_mu_. The store is borrowed and must outlive the sampler.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "db/job_program_repository.h"
#include "db/stats_repository.h"
#include "db/store.h"
#include "db/utilization_repository.h"
#include "service/jobs/job.h"

namespace tpuemu::service {

struct UtilizationOptions {
  int64_t interval_ms = 10000;
  int64_t retention_seconds = 86400;
  std::function<int64_t()> now_ms;  // default: the wall clock
};

struct NodeUtilization {
  db::UtilizationRow sample;
  std::string accelerator_type;
};

class UtilizationSampler {
 public:
  UtilizationSampler(db::Store& store, UtilizationOptions options = {});
  ~UtilizationSampler();  // Stop()
  UtilizationSampler(const UtilizationSampler&) = delete;
  UtilizationSampler& operator=(const UtilizationSampler&) = delete;

  void Start();  // the periodic thread (no-op when interval_ms <= 0 or already started)
  // Several replicas on one store: the thread samples only while `leads()` is true (one replica
  // writes the history; ReplicaSet::leads), and when it starts leading it counts the jobs the
  // store says are RUNNING, whichever replica runs them. Other replicas' job changes reach
  // OnJobStateChanged through the change feed. Set before Start().
  void SetLeader(std::function<bool()> leads) { leads_ = std::move(leads); }
  void Stop();  // idempotent

  void OnJobStateChanged(const Job& job, std::optional<JobState> previous);
  // Samples every node now, writes the rows and prunes past the retention.
  Status SampleNow();
  // The node's samples of the last window_seconds, oldest first.
  Result<std::vector<db::UtilizationRow>> History(const std::string& node,
                                                  int64_t window_seconds) const;
  // The newest sample of every node sampled last time (for Prometheus gauges).
  std::vector<NodeUtilization> Latest() const;
  // Forgets job activity and latest samples (POST /_emulator/reset; the store is wiped apart).
  void Reset();
  int64_t interval_ms() const { return options_.interval_ms; }

 private:
  struct Busy {
    std::string job;
    int64_t ms = 0;
  };
  struct Running {
    std::string job;
    int64_t since_ms = 0;
  };
  int64_t Now() const;
  void Loop();
  // running_ from the jobs stored RUNNING (this replica just began to lead).
  void SeedRunning();
  // Brings nodes_ up to the store (requires sample_mu_).
  Status RefreshNodes(bool full);
  // The slice's HBM for an accelerator type, cached (requires sample_mu_).
  int64_t HbmTotal(const std::string& accelerator_type);

  db::Store& store_;
  const UtilizationOptions options_;
  db::UtilizationRepository samples_;
  db::StatsRepository stats_;
  db::JobProgramRepository programs_;

  mutable std::mutex mu_;
  std::condition_variable cv_;                      // stop requests
  std::map<std::string, Running> running_;          // node -> its running job; guarded by mu_
  std::map<std::string, std::vector<Busy>> ended_;  // node -> jobs that ran since last sample
  int64_t last_sample_ms_ = 0;                      // guarded by mu_
  std::vector<NodeUtilization> latest_;             // guarded by mu_
  bool stopping_ = false;                           // guarded by mu_
  uint64_t generation_ = 0;                         // Reset() count; guarded by mu_
  std::mutex sample_mu_;                            // serialises SampleNow
  // Guarded by sample_mu_: the nodes in the store at the last pass (by seq), the values of each
  // node's open run in the store (what the next pass compares with), and the generation they
  // were read in (a Reset reads both again).
  std::vector<db::NodeBrief> nodes_;
  std::unordered_map<std::string, db::UtilizationRow> open_runs_;
  std::map<std::string, int64_t> hbm_by_type_;
  std::optional<uint64_t> loaded_generation_;
  std::function<bool()> leads_;  // set before Start(); null = always
  std::thread thread_;
};

}  // namespace tpuemu::service
