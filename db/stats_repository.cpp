#include "db/stats_repository.h"

#include <cstdlib>

#include "db/list_queries.h"
#include "db/statement_helpers.h"

namespace tpuemu::db {

Result<std::map<std::pair<std::string, std::string>, int64_t>>
StatsRepository::CountNodesByStateAndType() const {
  using Counts = std::map<std::pair<std::string, std::string>, int64_t>;
  return store_.ReadResult<Counts>([&](Txn& txn) -> Result<Counts> {
    TPUEMU_PREPARE_OR_RETURN(
        stmt, txn.Prepare("SELECT state, accelerator_type, n FROM node_state_counts WHERE n > 0"));
    Counts counts;
    for (;;) {
      Result<bool> more = stmt.Step();
      if (!more.ok()) return more.status();
      if (!*more) return counts;
      counts[{stmt.ColumnText(0), stmt.ColumnText(1)}] = stmt.ColumnInt64(2);
    }
  });
}

Result<std::map<std::string, int64_t>> StatsRepository::CountJobsByState() const {
  using Counts = std::map<std::string, int64_t>;
  return store_.ReadResult<Counts>([&](Txn& txn) -> Result<Counts> {
    TPUEMU_PREPARE_OR_RETURN(stmt,
                             txn.Prepare("SELECT state, n FROM job_state_counts WHERE n > 0"));
    Counts counts;
    for (;;) {
      Result<bool> more = stmt.Step();
      if (!more.ok()) return more.status();
      if (!*more) return counts;
      counts[stmt.ColumnText(0)] = stmt.ColumnInt64(1);
    }
  });
}

namespace {
Result<std::vector<NodeBrief>> ReadBriefs(Txn& txn, int64_t after_seq, int limit) {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare(
                "SELECT name, state, accelerator_type, tensorcores, seq FROM nodes WHERE seq > ?1 "
                "ORDER BY seq LIMIT ?2"));
  stmt.Bind(1, after_seq).Bind(2, limit > 0 ? int64_t{limit} : kNoLimit);
  std::vector<NodeBrief> nodes;
  for (;;) {
    Result<bool> more = stmt.Step();
    if (!more.ok()) return more.status();
    if (!*more) return nodes;
    nodes.push_back({stmt.ColumnText(0), stmt.ColumnText(1), stmt.ColumnText(2),
                     stmt.ColumnInt64(3), stmt.ColumnInt64(4)});
  }
}
}  // namespace

Result<std::vector<NodeBrief>> StatsRepository::ListAllNodes() const {
  return store_.ReadResult<std::vector<NodeBrief>>([&](Txn& txn) { return ReadBriefs(txn, 0, 0); });
}

Result<StatsRepository::NodesAfter> StatsRepository::ListNodesAfter(int64_t after_seq,
                                                                    int limit) const {
  return store_.ReadResult<NodesAfter>([&](Txn& txn) -> Result<NodesAfter> {
    // Both reads under one lease: no write of this process falls between them.
    TPUEMU_PREPARE_OR_RETURN(count,
                             txn.Prepare("SELECT COALESCE(SUM(n), 0) FROM node_state_counts"));
    Result<bool> row = count.Step();
    if (!row.ok()) return row.status();
    NodesAfter out;
    out.total = *row ? count.ColumnInt64(0) : 0;
    Result<std::vector<NodeBrief>> nodes = ReadBriefs(txn, after_seq, limit);
    if (!nodes.ok()) return nodes.status();
    out.nodes = std::move(nodes).value();
    return out;
  });
}

Result<double> StatsRepository::MeanStepMxuUtilization(std::string_view job) const {
  return store_.ReadResult<double>([&](Txn& txn) -> Result<double> {
    TPUEMU_PREPARE_OR_RETURN(
        stmt,
        txn.Prepare("SELECT COALESCE(AVG(mxu_utilization), 0) FROM job_steps WHERE job = ?1"));
    stmt.Bind(1, job);
    Result<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    if (!*row) return 0.0;
    return std::strtod(stmt.ColumnText(0).c_str(), nullptr);
  });
}

}  // namespace tpuemu::db
