#include "db/stats_repository.h"

#include <cstdlib>

namespace tpuemu::db {

Result<std::map<std::pair<std::string, std::string>, int64_t>>
StatsRepository::CountNodesByStateAndType() const {
  using Counts = std::map<std::pair<std::string, std::string>, int64_t>;
  return store_.ReadResult<Counts>([&](Txn& txn) -> Result<Counts> {
    Result<Statement*> stmt = txn.Prepare(
        "SELECT state, accelerator_type, COUNT(*) FROM nodes GROUP BY state, accelerator_type");
    if (!stmt.ok()) return stmt.status();
    Counts counts;
    for (;;) {
      Result<bool> more = (*stmt)->Step();
      if (!more.ok()) return more.status();
      if (!*more) return counts;
      counts[{(*stmt)->ColumnText(0), (*stmt)->ColumnText(1)}] = (*stmt)->ColumnInt64(2);
    }
  });
}

Result<std::map<std::string, int64_t>> StatsRepository::CountJobsByState() const {
  using Counts = std::map<std::string, int64_t>;
  return store_.ReadResult<Counts>([&](Txn& txn) -> Result<Counts> {
    Result<Statement*> stmt = txn.Prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state");
    if (!stmt.ok()) return stmt.status();
    Counts counts;
    for (;;) {
      Result<bool> more = (*stmt)->Step();
      if (!more.ok()) return more.status();
      if (!*more) return counts;
      counts[(*stmt)->ColumnText(0)] = (*stmt)->ColumnInt64(1);
    }
  });
}

Result<std::vector<NodeBrief>> StatsRepository::ListAllNodes() const {
  return store_.ReadResult<std::vector<NodeBrief>>([&](Txn& txn) -> Result<std::vector<NodeBrief>> {
    Result<Statement*> stmt =
        txn.Prepare("SELECT name, state, accelerator_type, tensorcores FROM nodes ORDER BY seq");
    if (!stmt.ok()) return stmt.status();
    std::vector<NodeBrief> nodes;
    for (;;) {
      Result<bool> more = (*stmt)->Step();
      if (!more.ok()) return more.status();
      if (!*more) return nodes;
      nodes.push_back({(*stmt)->ColumnText(0), (*stmt)->ColumnText(1), (*stmt)->ColumnText(2),
                       (*stmt)->ColumnInt64(3)});
    }
  });
}

Result<double> StatsRepository::MeanStepMxuUtilization(std::string_view job) const {
  return store_.ReadResult<double>([&](Txn& txn) -> Result<double> {
    Result<Statement*> stmt =
        txn.Prepare("SELECT COALESCE(AVG(mxu_utilization), 0) FROM job_steps WHERE job = ?1");
    if (!stmt.ok()) return stmt.status();
    (*stmt)->Bind(1, job);
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return 0.0;
    return std::strtod((*stmt)->ColumnText(0).c_str(), nullptr);
  });
}

}  // namespace tpuemu::db
