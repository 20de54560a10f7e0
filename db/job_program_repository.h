// JobProgramRepository: the `job_programs` table (schema v3) — one row per job, written when the
// job's program has compiled: cache hit or miss, compile time, TensorCores, peak HBM and the bytes
// each step moves between host and device. The metrics report and the utilization sampler read it
// while the job still runs (the job's result is only written at the end). A trigger deletes the
// row with its job.
//
// Holds only the Store reference (not owned; must outlive the repository): as thread-safe as the
// Store. Errors: kNotFound for a job without a row, and whatever the Store reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct JobProgramRow {
  std::string job;  // the job's full name
  bool compile_cache_hit = false;
  double compile_seconds = 0;  // 0 on a cache hit
  int64_t compile_end_unix_ns = 0;
  int64_t tensorcores = 1;  // TensorCores the job's steps occupy
  int64_t hbm_peak_bytes_per_tensorcore = 0;
  int64_t transfer_to_device_bytes_per_step = 0;
  int64_t transfer_from_device_bytes_per_step = 0;
  friend bool operator==(const JobProgramRow&, const JobProgramRow&) = default;
};

class JobProgramRepository {
 public:
  explicit JobProgramRepository(Store& store) : store_(store) {}

  // Inserts or replaces the job's row (a re-queued job compiles again).
  Status Put(Txn& txn, const JobProgramRow& row) const;
  Result<JobProgramRow> Get(Txn& txn, std::string_view job) const;
  Result<JobProgramRow> Get(std::string_view job) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
