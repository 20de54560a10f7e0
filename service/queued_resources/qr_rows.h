// Conversions between the service's QueuedResource and db's QueuedResourceRow: the only file that
// knows both.
#pragma once

#include "base/status.h"
#include "db/queued_resource_repository.h"
#include "service/queued_resources/queued_resource.h"

namespace tpuemu::service {

// update_time is set to now.
db::QueuedResourceRow QueuedResourceToRow(const QueuedResource& qr);
// INTERNAL naming the queued resource when the row cannot be understood.
Result<QueuedResource> QueuedResourceFromRow(const db::QueuedResourceRow& row);

}  // namespace tpuemu::service
