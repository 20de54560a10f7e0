// The tpuemud the whole-job benches (bench_daemon_jobs, bench_job_scaling) run jobs on: an
// in-memory store, no delays, no worker sandboxes, and one v4-32 node waited READY.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"

namespace tpuemu::bench {

// Starts `daemon` (its binary set by the caller if not the default); false, saying so, if it
// did not start.
inline bool StartBenchDaemon(testing::DaemonProcess& daemon) {
  if (daemon.Start({"--port", "0", "--log-level", "warn", "--db",
                    ":memory:", "--provisioning-delay-ms", "0", "--transition-delay-ms", "0",
                    "--worker-sandboxes", "off"})) {
    return true;
  }
  std::fprintf(stderr, "tpuemud did not start\n");
  return false;
}

// Creates v4-32 node `id` in us-central2-b and waits until it is READY; its resource path, or ""
// when the create was refused.
inline std::string CreateReadyNode(testing::HttpClient& client, const std::string& id) {
  const std::string parent = "/v2/projects/bench/locations/us-central2-b/nodes";
  auto created =
      client.Request("POST", parent + "?nodeId=" + id,
                     R"({"acceleratorType":"v4-32","runtimeVersion":"tpu-ubuntu2204-base"})");
  if (!created.ok() || created->status != 200) return "";
  const std::string node = parent + "/" + id;
  for (;;) {
    auto r = client.Request("GET", node);
    if (r.ok() && r->Json().value("state", "") == "READY") return node;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace tpuemu::bench
