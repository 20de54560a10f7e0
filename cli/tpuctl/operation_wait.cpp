#include "cli/tpuctl/operation_wait.h"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <thread>

namespace tpuemu::cli {

using nlohmann::json;

Result<json> WaitForOperation(Context& ctx, json op) {
  const std::string name = op.value("name", std::string());
  if (name.empty()) return Status::Internal("the reply is not an Operation (no name)");
  static const char kSpinner[] = {'|', '/', '-', '\\'};
  int ticks = 0;
  auto delay = std::chrono::milliseconds(50);
  if (ctx.progress)
    *ctx.err << "Waiting for operation [" << name << "] to complete..." << std::flush;
  while (!op.value("done", false)) {
    if (ctx.progress) *ctx.err << kSpinner[ticks++ % 4] << "\b" << std::flush;
    // Polling the service, as gcloud does; the wait is between two HTTP calls, not a test sleep.
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(1000));
    Result<json> next = ctx.api->Get("/v2/" + name);
    if (!next.ok()) {
      if (ctx.progress) *ctx.err << "failed.\n";
      return next.status();
    }
    op = *next;
  }
  if (op.contains("error")) {
    if (ctx.progress) *ctx.err << "failed.\n";
    const json& e = op["error"];
    int code = e.value("code", static_cast<int>(StatusCode::kUnknown));
    if (code <= 0 || code > static_cast<int>(StatusCode::kUnauthenticated)) {
      code = static_cast<int>(StatusCode::kUnknown);
    }
    return Status(static_cast<StatusCode>(code),
                  e.value("message", std::string("operation failed")));
  }
  if (ctx.progress) *ctx.err << "done.\n";
  return op.contains("response") ? op["response"] : json::object();
}

}  // namespace tpuemu::cli
