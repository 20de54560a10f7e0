// OperationManager: the long-running Operations (AIP-151) of the Cloud TPU API — operations.get,
// list, delete and cancel — and the writes a node transition makes to its Operation.
//
// A node and its Operation change in ONE transaction: the node life cycle (NodeManager) calls
// Insert/Load/Update from inside its WriteBatcher body with that body's Txn. Delete and Cancel
// run their own body on the same batcher, so they are ordered with the transitions that complete
// operations (a cancel is never lost under a completion's read-modify-write). Reads go straight to
// the store: an Operation is only ever read after the commit that wrote it was acknowledged.
//
// Ownership and threads: the store, batcher and catalog are borrowed and must outlive the
// manager. It keeps no mutable state of its own, so it is as thread-safe as the store and the
// batcher; the Txn& forms must only be called from inside a batcher body.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "db/operation_repository.h"
#include "db/store.h"
#include "service/catalog/catalog.h"
#include "service/common/page_token.h"
#include "service/common/write_batcher.h"
#include "service/operations/operation.h"

namespace tpuemu::service {

struct OperationPage {
  std::vector<Operation> operations;
  std::string next_page_token;  // empty on the last page
};

class OperationManager {
 public:
  OperationManager(db::Store& store, WriteBatcher& batcher, const Catalog& catalog);

  // NOT_FOUND "Resource '<name>' was not found" for an unknown name.
  Result<Operation> Get(const std::string& name) const;
  // In creation order; zone "-" lists every zone, an unknown zone is NOT_FOUND. Page tokens are
  // seq tokens (service/common/page_token.h); pages hold 100 by default.
  Result<OperationPage> List(const std::string& project, const std::string& zone,
                             const PageRequest& page) const;
  // FAILED_PRECONDITION while the Operation is still running.
  Status Delete(const std::string& name);
  // Best effort: marks a running Operation cancelRequested (it still completes); OK and no
  // change for one already done or already cancelled.
  Status Cancel(const std::string& name);

  // Inside a batcher body. Writes a new Operation and sets op.seq.
  Status Insert(db::Txn& txn, Operation& op) const;
  // Inside a batcher body. The stored Operation (the store's NOT_FOUND if absent).
  Result<Operation> Load(db::Txn& txn, const std::string& name) const;
  // Inside a batcher body. Rewrites the stored Operation of op.name.
  Status Update(db::Txn& txn, const Operation& op) const;

 private:
  const Catalog& catalog_;
  WriteBatcher& batcher_;
  db::OperationRepository operations_;
};

}  // namespace tpuemu::service
