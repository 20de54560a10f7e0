// Conversions between the service's Operation and db's OperationRow: the only file that knows
// both.
#pragma once

#include "base/status.h"
#include "db/operation_repository.h"
#include "service/operations/operation.h"

namespace tpuemu::service {

db::OperationRow OperationToRow(const Operation& op);
// INTERNAL naming the operation when its stored response is not JSON.
Result<Operation> OperationFromRow(const db::OperationRow& row);

}  // namespace tpuemu::service
