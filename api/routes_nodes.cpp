// nodes.* of the Cloud TPU API, under /v2 and /v2alpha1 (docs/api-fidelity.md §2); v2alpha1
// adds simulateMaintenanceEvent and performMaintenance (service/faults/maintenance.h) and renders
// upcomingMaintenance.
#include "api/api_common.h"
#include "api/chaos_middleware.h"
#include "api/google_error.h"
#include "api/node_codec.h"
#include "api/operation_reply.h"
#include "api/resource_keys.h"
#include "api/routes.h"
#include "service/nodes/guest_attributes.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

HttpResponse Create(service::NodeManager& nodes, ApiVersion version, const HttpRequest& req,
                    const PathParams& p) {
  std::optional<std::string> node_id = req.Query("nodeId");
  if (!node_id || node_id->empty()) {
    return ErrorResponse(Status::InvalidArgument("Query parameter 'nodeId' is required."));
  }
  Result<json> body = ParseApiBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  Result<service::NodeSpec> spec = DecodeNode(*body);
  if (!spec.ok()) return ErrorResponse(spec.status());
  spec->injected_failure = InjectedOperationFault(req);
  return ReplyOperation(req, nodes.Create({p.at("project"), p.at("location"), *node_id}, *spec),
                        version);
}

// The cached v2 rendering when enums go out as names (the common case), else rendered anew.
std::string NodeJsonForWire(const HttpRequest& req, ApiVersion version,
                            const service::NodeView& view) {
  const bool int_enums = WantsIntEnums(req);
  if (!int_enums && version == ApiVersion::kV2) return view.json;
  json out = service::RenderNode(view.node, {.v2alpha1 = version == ApiVersion::kV2Alpha1});
  if (int_enums) NodeEnumsToInt(out);
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse List(service::NodeManager& nodes, ApiVersion version, const HttpRequest& req,
                  const PathParams& p) {
  Result<service::PageRequest> page = ParsePage(req);
  if (!page.ok()) return ErrorResponse(page.status());
  Result<service::NodeViewPage> result = nodes.ListViews(p.at("project"), p.at("location"), *page);
  if (!result.ok()) return ErrorResponse(result.status());
  // Spliced from the nodes' cached JSON; keys in the order nlohmann's sorted object writes them.
  const bool cached_json = !WantsIntEnums(req) && version == ApiVersion::kV2;
  std::string body = "{";
  if (!result->next_page_token.empty()) {
    body += "\"nextPageToken\":" + json(result->next_page_token).dump() + ",";
  }
  if (cached_json) {  // sized once: growing 75 KB by doubling copied it twice over
    std::size_t size = body.size() + 16;
    for (const auto& view : result->nodes) size += view->json.size() + 1;
    body.reserve(size);
  }
  body += "\"nodes\":[";
  for (std::size_t i = 0; i < result->nodes.size(); ++i) {
    if (i > 0) body += ',';
    if (cached_json) {
      body += result->nodes[i]->json;  // appended in place, not copied out first
    } else {
      body += NodeJsonForWire(req, version, *result->nodes[i]);
    }
  }
  body += "]}";
  return JsonResponse(200, std::move(body));
}

HttpResponse Patch(service::NodeManager& nodes, ApiVersion version, const HttpRequest& req,
                   const PathParams& p) {
  Result<json> body = ParseApiBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  // Type-check the body the same way as a create; the masked fields are then copied over.
  Result<service::NodeSpec> spec = DecodeNode(*body);
  if (!spec.ok()) return ErrorResponse(spec.status());
  std::vector<std::string> mask = SplitMask(req.Query("updateMask").value_or(""));
  return ReplyOperation(req, nodes.Update(NodeKeyOf(p), spec->fields, mask), version);
}

HttpResponse GuestAttributes(service::NodeManager& nodes, const service::WorkerManager* workers,
                             const HttpRequest& req, const PathParams& p) {
  Result<json> body = ParseApiBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  std::string query_path;
  if (auto it = body->find("queryPath"); it != body->end() && !it->is_null()) {
    if (!it->is_string()) {
      return ErrorResponse(
          Status::InvalidArgument("Invalid value at 'query_path' (TYPE_STRING), " + it->dump()));
    }
    query_path = it->get<std::string>();
  }
  Result<std::vector<std::string>> worker_ids = BodyStringList(*body, "workerIds", "worker_ids");
  if (!worker_ids.ok()) return ErrorResponse(worker_ids.status());
  Result<std::shared_ptr<const service::NodeView>> view = nodes.GetView(NodeKeyOf(p));
  if (!view.ok()) return ErrorResponse(view.status());
  const service::Node& node = (*view)->node;
  std::function<std::string(int)> host_key;
  if (workers != nullptr && node.sandbox.enabled) {
    host_key = [workers, &node](int w) {
      Result<std::string> key = workers->HostKey(node, w);
      return key.ok() ? *key : std::string();
    };
  }
  return Reply(service::RenderGuestAttributes(node, query_path, *worker_ids, host_key));
}

}  // namespace

Handler AdmittedWrite(const service::NodeManager& nodes, Handler handler) {
  return [&nodes, handler = std::move(handler)](const HttpRequest& req, const PathParams& p) {
    if (std::optional<int64_t> retry_ms = nodes.WriteBacklog()) {
      return RetryLaterResponse(
          "tpuemud's store is behind its write load (writes and due node transitions wait "
          "longer than --max-write-lag-ms); retry after " +
              std::to_string(*retry_ms) + " ms",
          *retry_ms);
    }
    return handler(req, p);
  };
}

namespace {

void RegisterVersion(Router& router, ApiVersion version, service::NodeManager& nodes,
                     service::MaintenanceManager& maintenance, WorkerThreads& writers,
                     const service::WorkerManager* workers) {
  const std::string base =
      "/" + std::string(ApiVersionName(version)) + "/projects/{project}/locations/{location}";
  const std::string collection = base + "/nodes";
  const std::string node = collection + "/{node}";
  router.Add("GET", collection, [&nodes, version](const HttpRequest& req, const PathParams& p) {
    return List(nodes, version, req, p);
  });
  router.Add("GET", node, [&nodes, version](const HttpRequest& req, const PathParams& p) {
    Result<std::shared_ptr<const service::NodeView>> view = nodes.GetView(NodeKeyOf(p));
    if (!view.ok()) return ErrorResponse(view.status());
    return JsonResponse(200, NodeJsonForWire(req, version, **view));
  });
  router.Add("POST", node + ":getGuestAttributes",
             [&nodes, workers](const HttpRequest& req, const PathParams& p) {
               return GuestAttributes(nodes, workers, req, p);
             });
  // Mutations: on the writer threads.
  router.AddAsync("POST", collection,
                  writers.Offload(AdmittedWrite(
                      nodes, [&nodes, version](const HttpRequest& req, const PathParams& p) {
                        return Create(nodes, version, req, p);
                      })));
  router.AddAsync("DELETE", node,
                  writers.Offload(AdmittedWrite(
                      nodes, [&nodes, version](const HttpRequest& req, const PathParams& p) {
                        return ReplyOperation(req, nodes.Delete(NodeKeyOf(p)), version);
                      })));
  router.AddAsync("PATCH", node,
                  writers.Offload(AdmittedWrite(
                      nodes, [&nodes, version](const HttpRequest& req, const PathParams& p) {
                        return Patch(nodes, version, req, p);
                      })));
  router.AddAsync("POST", node + ":start",
                  writers.Offload(AdmittedWrite(
                      nodes, [&nodes, version](const HttpRequest& req, const PathParams& p) {
                        Result<json> body = ParseApiBody(req.body);
                        if (!body.ok()) return ErrorResponse(body.status());
                        return ReplyOperation(req, nodes.Start(NodeKeyOf(p)), version);
                      })));
  router.AddAsync("POST", node + ":stop",
                  writers.Offload(AdmittedWrite(
                      nodes, [&nodes, version](const HttpRequest& req, const PathParams& p) {
                        Result<json> body = ParseApiBody(req.body);
                        if (!body.ok()) return ErrorResponse(body.status());
                        return ReplyOperation(req, nodes.Stop(NodeKeyOf(p)), version);
                      })));
  if (version != ApiVersion::kV2Alpha1) return;
  router.AddAsync(
      "POST", node + ":simulateMaintenanceEvent",
      writers.Offload([&maintenance, version](const HttpRequest& req, const PathParams& p) {
        Result<json> body = ParseApiBody(req.body);
        if (!body.ok()) return ErrorResponse(body.status());
        Result<std::vector<std::string>> workers = BodyStringList(*body, "workerIds", "worker_ids");
        if (!workers.ok()) return ErrorResponse(workers.status());
        return ReplyOperation(req, maintenance.Simulate(NodeKeyOf(p), *workers), version);
      }));
  router.AddAsync(
      "POST", node + ":performMaintenance",
      writers.Offload([&maintenance, version](const HttpRequest& req, const PathParams& p) {
        Result<json> body = ParseApiBody(req.body);
        if (!body.ok()) return ErrorResponse(body.status());
        return ReplyOperation(req, maintenance.Perform(NodeKeyOf(p)), version);
      }));
}

}  // namespace

void RegisterNodeRoutes(Router& router, service::NodeManager& nodes,
                        service::MaintenanceManager& maintenance, WorkerThreads& writers,
                        const service::WorkerManager* workers) {
  for (ApiVersion version : {ApiVersion::kV2, ApiVersion::kV2Alpha1}) {
    RegisterVersion(router, version, nodes, maintenance, writers, workers);
  }
}

}  // namespace tpuemu::api
