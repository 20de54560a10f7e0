#include "service/queued_resources/qr_state_machine.h"

#include <string>

namespace tpuemu::service {
namespace {

Status Refuse(std::string_view verb, std::string_view name, QrState state, std::string_view hint) {
  return Status::FailedPrecondition("Cannot " + std::string(verb) + " queued resource '" +
                                    std::string(name) + "' in state " +
                                    std::string(QrStateName(state)) + std::string(hint) + ".");
}

}  // namespace

bool IsQueued(QrState state) {
  return state == QrState::kAccepted || state == QrState::kWaitingForResources;
}

Status CheckDelete(std::string_view name, QrState state, bool has_nodes, bool force) {
  switch (state) {
    case QrState::kCreating:
      return Refuse("delete", name, state, ": it is still being created");
    case QrState::kDeleting:
      return Refuse("delete", name, state, ": it is already being deleted");
    case QrState::kAccepted:
    case QrState::kWaitingForResources:
    case QrState::kFailed:
    case QrState::kSuspended:
      return Status::Ok();
    default:
      break;
  }
  if (!has_nodes || force) return Status::Ok();
  return Refuse("delete", name, state,
                " while it has nodes: delete its nodes first, or delete with force=true");
}

Status CheckReset(std::string_view name, QrState state, bool has_nodes) {
  if (state != QrState::kSuspended && state != QrState::kFailed) {
    return Refuse("reset", name, state, ": only a SUSPENDED or FAILED queued resource resets");
  }
  if (has_nodes) return Refuse("reset", name, state, ": its nodes are still being deleted");
  return Status::Ok();
}

}  // namespace tpuemu::service
