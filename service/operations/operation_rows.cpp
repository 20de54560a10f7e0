#include "service/operations/operation_rows.h"

namespace tpuemu::service {

db::OperationRow OperationToRow(const Operation& op) {
  db::OperationRow row;
  row.name = op.name;
  row.project = op.project;
  row.zone = op.zone;
  row.target = op.target;
  row.verb = op.verb;
  row.create_time = op.create_time;
  if (!op.end_time.empty()) row.end_time = op.end_time;
  row.done = op.done;
  row.cancel_requested = op.cancel_requested;
  if (!op.error.ok()) {
    row.error_code = static_cast<int32_t>(op.error.code());
    row.error_message = op.error.message();
  }
  if (!op.response.is_null()) row.response_json = op.response.dump();
  row.seq = op.seq;
  return row;
}

Result<Operation> OperationFromRow(const db::OperationRow& row) {
  Operation op;
  op.name = row.name;
  op.project = row.project;
  op.zone = row.zone;
  op.target = row.target;
  op.verb = row.verb;
  op.create_time = row.create_time;
  op.end_time = row.end_time.value_or("");
  op.done = row.done;
  op.cancel_requested = row.cancel_requested;
  if (row.error_code && *row.error_code != 0) {
    op.error = Status(static_cast<StatusCode>(*row.error_code), row.error_message.value_or(""));
  }
  if (row.response_json) {
    op.response = nlohmann::json::parse(*row.response_json, nullptr, false);
    if (op.response.is_discarded())
      return Status::Internal("stored operation " + row.name + ": bad JSON");
  }
  op.seq = row.seq;
  return op;
}

}  // namespace tpuemu::service
