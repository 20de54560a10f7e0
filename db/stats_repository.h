// StatsRepository: read-only aggregate queries over the nodes, jobs and job_steps tables, for
// Prometheus gauges and the utilization sampler (counts by state, every node across projects,
// a job's mean step utilization). No table of its own.
//
// Holds only the Store reference (not owned; must outlive the repository): as thread-safe as the
// Store. Errors: whatever the Store reports.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct NodeBrief {
  std::string name;  // "projects/p/locations/z/nodes/n"
  std::string state;
  std::string accelerator_type;
  int64_t tensorcores = 0;
};

class StatsRepository {
 public:
  explicit StatsRepository(Store& store) : store_(store) {}

  // (state, accelerator_type) -> number of nodes, over every project and zone.
  Result<std::map<std::pair<std::string, std::string>, int64_t>> CountNodesByStateAndType() const;
  // state -> number of jobs (jobs of deleted nodes included).
  Result<std::map<std::string, int64_t>> CountJobsByState() const;
  // Every node of every project, by seq.
  Result<std::vector<NodeBrief>> ListAllNodes() const;
  // The mean mxu_utilization over the job's stored steps; 0 when it has none.
  Result<double> MeanStepMxuUtilization(std::string_view job) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
