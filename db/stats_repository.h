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
  int64_t seq = 0;
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
  // At most `limit` nodes with seq > after_seq, by seq (a walk in pages that lets other readers
  // in between), and how many nodes the store holds, read together (from the counter table).
  struct NodesAfter {
    std::vector<NodeBrief> nodes;
    int64_t total = 0;
  };
  Result<NodesAfter> ListNodesAfter(int64_t after_seq, int limit) const;
  // The mean mxu_utilization over the job's stored steps; 0 when it has none.
  Result<double> MeanStepMxuUtilization(std::string_view job) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
