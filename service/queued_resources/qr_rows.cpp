#include "service/queued_resources/qr_rows.h"

#include "service/common/clock.h"

namespace tpuemu::service {

db::QueuedResourceRow QueuedResourceToRow(const QueuedResource& qr) {
  db::QueuedResourceRow row;
  row.name = qr.key.Name();
  row.project = qr.key.project;
  row.zone = qr.key.zone;
  row.queued_resource_id = qr.key.id;
  row.state = std::string(QrStateName(qr.state));
  row.tensorcores = qr.tensorcores;
  row.held_tensorcores = qr.held_tensorcores;
  if (!qr.reservation.empty()) row.reservation = qr.reservation;
  row.create_time = qr.create_time;
  row.update_time = NowRfc3339();
  row.resource_json = QueuedResourceToStorage(qr).dump();
  row.pending_operation = qr.pending_operation;
  row.due_ms = qr.due_ms;
  row.seq = qr.seq;
  return row;
}

Result<QueuedResource> QueuedResourceFromRow(const db::QueuedResourceRow& row) {
  QueuedResource qr;
  qr.key = {row.project, row.zone, row.queued_resource_id};
  qr.seq = row.seq;
  qr.create_time = row.create_time;
  Result<QrState> state = ParseQrState(row.state);
  if (!state.ok()) {
    return Status::Internal("stored queued resource " + row.name + ": " + state.status().message());
  }
  qr.state = *state;
  qr.tensorcores = row.tensorcores;
  qr.held_tensorcores = row.held_tensorcores;
  qr.reservation = row.reservation.value_or("");
  qr.pending_operation = row.pending_operation;
  qr.due_ms = row.due_ms;
  Status s = QueuedResourceFromStorage(
      nlohmann::json::parse(row.resource_json, nullptr, /*allow_exceptions=*/false), qr);
  if (!s.ok()) return Status::Internal("stored queued resource " + row.name + ": " + s.message());
  return qr;
}

}  // namespace tpuemu::service
