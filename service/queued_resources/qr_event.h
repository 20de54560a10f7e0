// The events-feed row of a queued resource state change (kind "queuedResource"; a deleted one is
// "DELETED", a new one has no previousState). Written by QueuedResourceManager in the change's
// transaction.
#pragma once

#include "db/event_repository.h"
#include "service/queued_resources/queued_resource.h"

namespace tpuemu::service {

db::EventRow QueuedResourceEvent(const QueuedResource& qr, QrState previous);

}  // namespace tpuemu::service
