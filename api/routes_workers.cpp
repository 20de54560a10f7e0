// TPU VM workers (an emulator extension beside the nodes): each worker's address, state, SSH
// command and startup script (service/workers/worker_manager.h), and the dashboard's terminal
// into one (a WebSocket: api/terminal_session.h).
#include <string>

#include "api/api_common.h"
#include "api/google_error.h"
#include "api/resource_keys.h"
#include "api/routes.h"
#include "api/terminal_session.h"
#include "api/worker_threads.h"
#include "service/workers/console_terminal.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

// A worker index of the path ("0".."99999"); -1 for anything else.
int WorkerIndex(const std::string& id) {
  if (id.empty() || id.size() >= 6 || id.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  return std::stoi(id);
}

// ?cols=C / ?rows=R: 1..1000, else INVALID_ARGUMENT naming it.
Result<int> TerminalSize(const HttpRequest& req, const char* name, int fallback) {
  std::optional<std::string> text = req.Query(name);
  if (!text) return fallback;
  if (text->empty() || text->size() > 4 ||
      text->find_first_not_of("0123456789") != std::string::npos || std::stoi(*text) < 1 ||
      std::stoi(*text) > 1000) {
    return Status::InvalidArgument(std::string("Invalid value for field '") + name + "': '" +
                                   *text + "'. Must be 1..1000");
  }
  return std::stoi(*text);
}

// GET …/workers/{worker}/terminal as a WebSocket: the dashboard's SSH button
// (api/terminal_session.h). Runs on a worker thread: opening logs the person in (ssh-keygen,
// the worker's account agent, ssh).
HttpResponse OpenTerminal(service::NodeManager& nodes, service::WorkerManager& workers,
                          TerminalBudget& terminals, const HttpRequest& req, const PathParams& p) {
  std::optional<std::string> upgrade = req.Header("upgrade");
  if (!upgrade || (*upgrade != "websocket" && *upgrade != "WebSocket")) {
    return ErrorResponse(Status::InvalidArgument(
        "This is a WebSocket endpoint (the dashboard's terminal): connect with Upgrade: "
        "websocket"));
  }
  Result<service::Node> node = nodes.Get(NodeKeyOf(p));
  if (!node.ok()) return ErrorResponse(node.status());
  const int worker = WorkerIndex(p.at("worker"));
  if (worker < 0 || worker >= node->type.workers) {
    return ErrorResponse(Status::NotFound("Worker '" + p.at("worker") + "' of node '" +
                                          node->key.Name() + "' not found."));
  }
  if (!node->sandbox.enabled) {
    return ErrorResponse(Status::FailedPrecondition("The node's workers are not sandboxes (" +
                                                    node->sandbox.reason +
                                                    "): nothing to log into."));
  }
  Result<int> cols = TerminalSize(req, "cols", 80);
  if (!cols.ok()) return ErrorResponse(cols.status());
  Result<int> rows = TerminalSize(req, "rows", 24);
  if (!rows.ok()) return ErrorResponse(rows.status());
  std::string why;
  std::shared_ptr<void> place =
      terminals.Take(node->key.Name() + "/" + std::to_string(worker), &why);
  if (!place) return ErrorResponse(Status::ResourceExhausted("Too many terminals: " + why + "."));
  service::ConsoleTerminal::Options options;
  options.node_name = node->key.Name();
  options.worker = worker;
  options.user = service::ConsoleUserName(req.principal);
  options.cols = *cols;
  options.rows = *rows;
  Result<std::unique_ptr<service::ConsoleTerminal>> terminal =
      service::ConsoleTerminal::Open(workers, options);
  if (!terminal.ok()) return ErrorResponse(terminal.status());
  return TerminalUpgrade(req, std::move(terminal).value(), std::move(place));
}

}  // namespace

void RegisterWorkerRoutes(Router& router, service::NodeManager& nodes,
                          service::WorkerManager& workers, WorkerThreads& threads,
                          TerminalBudget& terminals) {
  for (const char* version : {"v2", "v2alpha1"}) {
    const std::string node =
        std::string("/") + version + "/projects/{project}/locations/{location}/nodes/{node}";
    router.Add("GET", node + "/workers",
               [&nodes, &workers](const HttpRequest&, const PathParams& p) {
                 Result<service::Node> n = nodes.Get(NodeKeyOf(p));
                 if (!n.ok()) return ErrorResponse(n.status());
                 return JsonResponse(200, workers.Describe(*n));
               });
    router.Add("GET", node + "/workers/{worker}/startupScriptOutput",
               [&nodes, &workers](const HttpRequest& req, const PathParams& p) {
                 Result<service::Node> n = nodes.Get(NodeKeyOf(p));
                 if (!n.ok()) return ErrorResponse(n.status());
                 const int worker = WorkerIndex(p.at("worker"));
                 int64_t offset = 0;
                 if (auto o = req.Query("offset")) {
                   if (o->empty() || o->size() > 15 ||
                       o->find_first_not_of("0123456789") != std::string::npos) {
                     return ErrorResponse(
                         Status::InvalidArgument("Invalid value for field 'offset': '" + *o +
                                                 "'. Must be a non-negative integer"));
                   }
                   offset = std::stoll(*o);
                 }
                 Result<std::string> out = workers.StartupScriptOutput(*n, worker, offset);
                 if (!out.ok()) return ErrorResponse(out.status());
                 HttpResponse r;
                 r.content_type = "text/plain; charset=utf-8";
                 r.body = std::move(out).value();
                 return r;
               });
    router.AddAsync("GET", node + "/workers/{worker}/terminal",
                    threads.Offload([&nodes, &workers, &terminals](const HttpRequest& req,
                                                                   const PathParams& p) {
                      return OpenTerminal(nodes, workers, terminals, req, p);
                    }));
  }
}

}  // namespace tpuemu::api
