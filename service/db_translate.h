// The one place a db::DbStatus becomes a tpuemu::Status.
#pragma once

#include <string_view>

#include "db/db_status.h"
#include "engine/status.h"

namespace tpuemu::service {

// kNotFound -> NOT_FOUND, kAlreadyExists -> ALREADY_EXISTS, kBusy -> UNAVAILABLE (retryable),
// kCorruption -> DATA_LOSS, others -> INTERNAL; the message keeps db's text.
Status FromDb(const db::DbStatus& status);
// A db failure becomes a DbStatus carrying a service Status through a transaction body.
db::DbStatus ToDb(const Status& status);
// The inverse of ToDb for statuses that crossed a transaction: restores the canonical code.
Status FromTxn(const db::DbStatus& status, const Status& carried);

}  // namespace tpuemu::service
