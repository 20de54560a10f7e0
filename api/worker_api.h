// The TPU API as a worker reaches it from inside (TPUEMU_ENDPOINT, gcloud's and tpuctl's endpoint
// on the VM): http://169.254.169.254:8470 on its slice's private network, acting for the node's
// own project only, as the VM's service account does on Google Cloud. Every request is checked
// as an editor token granted that one project would be (api/auth.h's rules): another project's
// paths and project-less admin paths (/_emulator/...) are 403, whatever Authorization header the
// caller sent. Thread-safe; `inner` is the router's handler (no tokens asked: this wrapper is the
// authentication).
#pragma once

#include <string>

#include "api/http_types.h"

namespace tpuemu::api {

AsyncHandlerFn WorkerApiHandler(const std::string& project, AsyncHandlerFn inner);

}  // namespace tpuemu::api
