#include "service/common/event_sink.h"

#include <utility>

namespace tpuemu::service {

Status PendingEvents::Append(db::Txn& txn, db::EventRow event) {
  if (sink_ == nullptr) return Status::Ok();
  TPUEMU_RETURN_IF_ERROR(sink_->Append(txn, event));
  rows_.push_back(std::move(event));
  return Status::Ok();
}

void PendingEvents::Publish() {
  if (sink_ != nullptr) {
    for (const db::EventRow& row : rows_) sink_->Published(row);
  }
  rows_.clear();
}

}  // namespace tpuemu::service
