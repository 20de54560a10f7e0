#include "db/node_repository.h"

#include "db/list_queries.h"
#include "db/statement_helpers.h"

#include <string>

namespace tpuemu::db {
namespace {

// Column order shared by every SELECT below and by ReadRow.
// Every column but seq, which INSERT leaves to AUTOINCREMENT.
#define TPUEMU_NODE_INSERT_COLUMNS                                                         \
  "name, project, zone, node_id, uid, state, accelerator_type, tensorcores, create_time, " \
  "update_time, resource_json, pending_operation, pending_due_ms, queued_resource, "       \
  "zone_tensorcores, owner"
#define TPUEMU_NODE_COLUMNS TPUEMU_NODE_INSERT_COLUMNS ", seq"

NodeRow ReadNodeRow(const Statement& s) {
  NodeRow row;
  row.name = s.ColumnText(0);
  row.project = s.ColumnText(1);
  row.zone = s.ColumnText(2);
  row.node_id = s.ColumnText(3);
  row.uid = s.ColumnText(4);
  row.state = s.ColumnText(5);
  row.accelerator_type = s.ColumnText(6);
  row.tensorcores = s.ColumnInt64(7);
  row.create_time = s.ColumnText(8);
  row.update_time = s.ColumnText(9);
  row.resource_json = s.ColumnText(10);
  row.pending_operation = s.ColumnOptionalText(11);
  row.pending_due_ms = s.ColumnOptionalInt64(12);
  row.queued_resource = s.ColumnOptionalText(13);
  row.zone_tensorcores = s.ColumnInt64(14);
  row.owner = s.ColumnOptionalText(15);
  row.seq = s.ColumnInt64(16);
  return row;
}

// Binds ?2..?16 (every column but name and seq) in table order.
void BindBody(Statement& s, const NodeRow& row) {
  s.Bind(2, row.project)
      .Bind(3, row.zone)
      .Bind(4, row.node_id)
      .Bind(5, row.uid)
      .Bind(6, row.state)
      .Bind(7, row.accelerator_type)
      .Bind(8, row.tensorcores)
      .Bind(9, row.create_time)
      .Bind(10, row.update_time)
      .Bind(11, row.resource_json)
      .Bind(12, row.pending_operation)
      .Bind(13, row.pending_due_ms)
      .Bind(14, row.queued_resource)
      .Bind(15, row.zone_tensorcores)
      .Bind(16, row.owner);
}

// The one integer a SUM query with one text parameter returns.
Result<int64_t> SumOne(Txn& txn, const char* sql, std::string_view param) {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare(sql));
  stmt.Bind(1, param);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  return *row ? stmt.ColumnInt64(0) : int64_t{0};
}

Result<std::vector<NodeRow>> CollectNodeRows(Statement& s) {
  std::vector<NodeRow> rows;
  for (;;) {
    Result<bool> more = s.Step();
    if (!more.ok()) return more.status();
    if (!*more) return rows;
    rows.push_back(ReadNodeRow(s));
  }
}

}  // namespace

Result<int64_t> NodeRepository::Insert(Txn& txn, const NodeRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(s, txn.Prepare("INSERT INTO nodes (" TPUEMU_NODE_INSERT_COLUMNS
                                          ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                                          "?12, ?13, ?14, ?15, ?16) RETURNING seq"));
  s.Bind(1, row.name);
  BindBody(s, row);
  return InsertReturningSeq(s, "node", row.name);
}

Status NodeRepository::Update(Txn& txn, const NodeRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      s,
      txn.Prepare("UPDATE nodes SET project = ?2, zone = ?3, node_id = ?4, uid = ?5, state = ?6, "
                  "accelerator_type = ?7, tensorcores = ?8, create_time = ?9, update_time = ?10, "
                  "resource_json = ?11, pending_operation = ?12, pending_due_ms = ?13, "
                  "queued_resource = ?14, "
                  "zone_tensorcores = ?15, owner = ?16 WHERE name = ?1"));
  s.Bind(1, row.name);
  BindBody(s, row);
  TPUEMU_RETURN_IF_ERROR(s.Run());
  if (txn.Changes() == 0) return Status::NotFound("node '" + row.name + "' not found");
  return Status::Ok();
}

Status NodeRepository::Delete(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM nodes WHERE name = ?1"));
  stmt.Bind(1, name);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  if (txn.Changes() == 0) return Status::NotFound("node '" + std::string(name) + "' not found");
  return Status::Ok();
}

Result<NodeRow> NodeRepository::Get(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("SELECT " TPUEMU_NODE_COLUMNS " FROM nodes WHERE name = ?1"));
  stmt.Bind(1, name);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("node '" + std::string(name) + "' not found");
  return ReadNodeRow(stmt);
}

Result<NodeRow> NodeRepository::Get(std::string_view name) const {
  return store_.ReadResult<NodeRow>([&](Txn& txn) { return Get(txn, name); });
}

Result<std::vector<NodeRow>> NodeRepository::List(Txn& txn, std::string_view project,
                                                  std::string_view zone, int64_t after_seq,
                                                  int limit) const {
  // Two texts rather than "(?2 = '-' OR zone = ?2)" so the one-zone case can seek the
  // (project, zone, seq) index and read rows already in seq order.
  const bool all_zones = zone == kAllZones;
  TPUEMU_PREPARE_OR_RETURN(
      s, all_zones ? txn.Prepare("SELECT " TPUEMU_NODE_COLUMNS TPUEMU_NODES_IN_PROJECT)
                   : txn.Prepare("SELECT " TPUEMU_NODE_COLUMNS TPUEMU_NODES_IN_LOCATION));
  s.Bind(1, project).Bind(3, after_seq).Bind(4, limit > 0 ? int64_t{limit} : kNoLimit);
  if (!all_zones) s.Bind(2, zone);
  return CollectNodeRows(s);
}

Result<std::vector<NodeRow>> NodeRepository::List(std::string_view project, std::string_view zone,
                                                  int64_t after_seq, int limit) const {
  return store_.ReadResult<std::vector<NodeRow>>(
      [&](Txn& txn) { return List(txn, project, zone, after_seq, limit); });
}

Result<std::vector<std::string>> NodeRepository::ListNames(std::string_view project,
                                                           std::string_view zone, int64_t after_seq,
                                                           int limit) const {
  return store_.ReadResult<std::vector<std::string>>(
      [&](Txn& txn) -> Result<std::vector<std::string>> {
        const bool all_zones = zone == kAllZones;
        TPUEMU_PREPARE_OR_RETURN(s, all_zones
                                        ? txn.Prepare("SELECT name" TPUEMU_NODES_IN_PROJECT)
                                        : txn.Prepare("SELECT name" TPUEMU_NODES_IN_LOCATION));
        s.Bind(1, project).Bind(3, after_seq).Bind(4, limit > 0 ? int64_t{limit} : kNoLimit);
        if (!all_zones) s.Bind(2, zone);
        std::vector<std::string> names;
        for (;;) {
          Result<bool> more = s.Step();
          if (!more.ok()) return more.status();
          if (!*more) return names;
          names.push_back(s.ColumnText(0));
        }
      });
}

Result<std::vector<NodeRow>> NodeRepository::ListPending(Txn& txn) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("SELECT " TPUEMU_NODE_COLUMNS TPUEMU_NODES_PENDING));
  return CollectNodeRows(stmt);
}

Result<std::vector<NodeRow>> NodeRepository::AdoptOrphans(Txn& txn, std::string_view owner,
                                                          bool include_own) const {
  // Only orphans are written: a restart under the same id rewrites nothing.
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("UPDATE nodes SET owner = ?1 WHERE (owner IS NULL OR owner NOT IN (SELECT "
                        "id FROM replicas)) "
                        "AND (owner IS NULL OR owner <> ?1) RETURNING " TPUEMU_NODE_COLUMNS));
  stmt.Bind(1, owner);
  Result<std::vector<NodeRow>> rows = CollectNodeRows(stmt);
  if (!rows.ok() || !include_own) return rows;
  TPUEMU_PREPARE_OR_RETURN(
      own, txn.Prepare("SELECT " TPUEMU_NODE_COLUMNS " FROM nodes WHERE owner = ?1 ORDER BY seq"));
  own.Bind(1, owner);
  Result<std::vector<NodeRow>> owned = CollectNodeRows(own);
  if (!owned.ok()) return owned.status();
  // The adopted rows are among `owned` now (same transaction): that list is the answer.
  return owned;
}

Result<std::vector<NodeRow>> NodeRepository::ListPending() const {
  return store_.ReadResult<std::vector<NodeRow>>([&](Txn& txn) { return ListPending(txn); });
}

Result<int64_t> NodeRepository::SumTensorCores(Txn& txn, std::string_view project,
                                               std::string_view zone) const {
  const bool all_zones = zone == kAllZones;
  TPUEMU_PREPARE_OR_RETURN(
      s, all_zones
             ? txn.Prepare("SELECT COALESCE(SUM(tensorcores), 0) FROM nodes WHERE project = ?1")
             : txn.Prepare("SELECT COALESCE(SUM(tensorcores), 0) FROM nodes WHERE project = ?1 AND "
                           "zone = ?2"));
  s.Bind(1, project);
  if (!all_zones) s.Bind(2, zone);
  Result<bool> row = s.Step();
  if (!row.ok()) return row.status();
  return *row ? s.ColumnInt64(0) : int64_t{0};
}

Result<int64_t> NodeRepository::SumTensorCores(std::string_view project,
                                               std::string_view zone) const {
  return store_.ReadResult<int64_t>([&](Txn& txn) { return SumTensorCores(txn, project, zone); });
}

Result<int64_t> NodeRepository::SumTensorCoresInZone(Txn& txn, std::string_view zone) const {
  // The counter the schema's triggers keep (schema v6), not a scan of the zone's nodes.
  return SumOne(txn, "SELECT nodes FROM zone_tensorcores WHERE zone = ?1", zone);
}

Result<int64_t> NodeRepository::SumStandaloneTensorCores(Txn& txn, std::string_view project) const {
  return SumOne(txn, "SELECT nodes FROM project_tensorcores WHERE project = ?1", project);
}

Result<std::vector<NodeRow>> NodeRepository::ListByQueuedResource(
    Txn& txn, std::string_view queued_resource) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("SELECT " TPUEMU_NODE_COLUMNS TPUEMU_NODES_OF_QUEUED_RESOURCE));
  stmt.Bind(1, queued_resource);
  return CollectNodeRows(stmt);
}

Result<std::vector<NodeRow>> NodeRepository::ListByQueuedResource(
    std::string_view queued_resource) const {
  return store_.ReadResult<std::vector<NodeRow>>(
      [&](Txn& txn) { return ListByQueuedResource(txn, queued_resource); });
}

Result<std::vector<NodeRow>> NodeRepository::ListAll(int64_t after_seq, int limit,
                                                     std::optional<std::string_view> owner) const {
  return store_.ReadResult<std::vector<NodeRow>>([&](Txn& txn) -> Result<std::vector<NodeRow>> {
    TPUEMU_PREPARE_OR_RETURN(
        stmt, owner ? txn.Prepare("SELECT " TPUEMU_NODE_COLUMNS
                                  " FROM nodes WHERE seq > ?1 AND owner = ?3 ORDER BY seq LIMIT ?2")
                    : txn.Prepare("SELECT " TPUEMU_NODE_COLUMNS
                                  " FROM nodes WHERE seq > ?1 ORDER BY seq LIMIT ?2"));
    stmt.Bind(1, after_seq).Bind(2, limit > 0 ? int64_t{limit} : kNoLimit);
    if (owner) stmt.Bind(3, *owner);
    return CollectNodeRows(stmt);
  });
}

Result<std::map<std::string, int64_t>> NodeRepository::CountByState(Txn& txn) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare("SELECT state, SUM(n) FROM node_state_counts GROUP BY state HAVING SUM(n) > 0"));
  std::map<std::string, int64_t> counts;
  for (;;) {
    Result<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    if (!*row) return counts;
    counts[stmt.ColumnText(0)] = stmt.ColumnInt64(1);
  }
}

Result<std::map<std::string, int64_t>> NodeRepository::CountByState() const {
  return store_.ReadResult<std::map<std::string, int64_t>>(
      [&](Txn& txn) { return CountByState(txn); });
}

}  // namespace tpuemu::db
