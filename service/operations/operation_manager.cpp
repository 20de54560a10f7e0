#include "service/operations/operation_manager.h"

#include "service/common/not_found.h"
#include "service/common/page_token.h"
#include "service/operations/operation_rows.h"

namespace tpuemu::service {

namespace {}  // namespace

OperationManager::OperationManager(db::Store& store, WriteBatcher& batcher, const Catalog& catalog)
    : catalog_(catalog), batcher_(batcher), operations_(store) {}

Result<Operation> OperationManager::Get(const std::string& name) const {
  Result<db::OperationRow> row = operations_.Get(name);
  if (!row.ok()) return NotFoundAs(row.status(), name);
  return OperationFromRow(*row);
}

Result<OperationPage> OperationManager::List(const std::string& project, const std::string& zone,
                                             const PageRequest& page) const {
  TPUEMU_RETURN_IF_ERROR(catalog_.CheckListLocation(project, zone));
  Result<int64_t> after = DecodePageToken(kSeqPageToken, page.page_token);
  if (!after.ok()) return after.status();
  const int size = PageSize(page, kDefaultPageSize);
  Result<std::vector<db::OperationRow>> rows = operations_.List(project, zone, *after, size + 1);
  if (!rows.ok()) return rows.status();
  OperationPage out;
  for (int i = 0; i < static_cast<int>(rows->size()) && i < size; ++i) {
    Result<Operation> op = OperationFromRow((*rows)[i]);
    if (!op.ok()) return op.status();
    out.operations.push_back(std::move(op).value());
  }
  if (static_cast<int>(rows->size()) > size) {
    out.next_page_token = EncodePageToken(kSeqPageToken, out.operations.back().seq);
  }
  return out;
}

Status OperationManager::Delete(const std::string& name) {
  return batcher_.Run([&](db::Txn& txn) -> Status {
    Result<db::OperationRow> row = operations_.Get(txn, name);
    if (!row.ok()) return NotFoundAs(row.status(), name);
    if (!row->done) {
      return Status::FailedPrecondition("Operation '" + name +
                                        "' is still running; wait for it or cancel it first.");
    }
    return operations_.Delete(txn, name);
  });
}

Status OperationManager::Cancel(const std::string& name) {
  return batcher_.Run([&](db::Txn& txn) -> Status {
    Result<db::OperationRow> row = operations_.Get(txn, name);
    if (!row.ok()) return NotFoundAs(row.status(), name);
    // Best effort (AIP-151): node transitions cannot be interrupted, so a running operation is
    // only marked cancelRequested and still completes; a finished one is left as it is.
    if (row->done || row->cancel_requested) return Status::Ok();
    row->cancel_requested = true;
    return operations_.Update(txn, *row);
  });
}

Status OperationManager::Insert(db::Txn& txn, Operation& op) const {
  Result<int64_t> seq = operations_.Insert(txn, OperationToRow(op));
  if (!seq.ok()) return seq.status();
  op.seq = *seq;
  return Status::Ok();
}

Result<Operation> OperationManager::Load(db::Txn& txn, const std::string& name) const {
  Result<db::OperationRow> row = operations_.Get(txn, name);
  if (!row.ok()) return row.status();
  return OperationFromRow(*row);
}

Status OperationManager::Update(db::Txn& txn, const Operation& op) const {
  return operations_.Update(txn, OperationToRow(op));
}

}  // namespace tpuemu::service
