// nodes.* of the Cloud TPU API v2 (docs/api-fidelity.md §2).
#include "api/api_common.h"
#include "api/google_error.h"
#include "api/node_codec.h"
#include "api/routes.h"
#include "service/nodes/guest_attributes.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

constexpr char kNodes[] = "/v2/projects/{project}/locations/{location}/nodes";
constexpr char kNode[] = "/v2/projects/{project}/locations/{location}/nodes/{node}";

service::NodeKey KeyOf(const PathParams& p) {
  return {p.at("project"), p.at("location"), p.at("node")};
}

HttpResponse ReplyOperation(const HttpRequest& req, const Result<service::Operation>& op) {
  if (!op.ok()) return ErrorResponse(op.status());
  json out = service::RenderOperation(*op);
  if (WantsIntEnums(req)) OperationEnumsToInt(out);
  return JsonResponse(200, out);
}

json RenderForWire(const HttpRequest& req, const service::Node& node) {
  json out = service::RenderNode(node);
  if (WantsIntEnums(req)) NodeEnumsToInt(out);
  return out;
}

HttpResponse Create(service::NodeManager& nodes, const HttpRequest& req, const PathParams& p) {
  std::optional<std::string> node_id = req.Query("nodeId");
  if (!node_id || node_id->empty()) {
    return ErrorResponse(Status::InvalidArgument("Query parameter 'nodeId' is required."));
  }
  Result<json> body = ParseBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  Result<service::NodeSpec> spec = DecodeNode(*body);
  if (!spec.ok()) return ErrorResponse(spec.status());
  return ReplyOperation(req, nodes.Create({p.at("project"), p.at("location"), *node_id}, *spec));
}

// The cached rendering when enums go out as names (the common case), else rendered anew.
std::string NodeJsonForWire(const HttpRequest& req, const service::NodeView& view) {
  if (!WantsIntEnums(req)) return view.json;
  return RenderForWire(req, view.node).dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse List(service::NodeManager& nodes, const HttpRequest& req, const PathParams& p) {
  Result<service::PageRequest> page = ParsePage(req);
  if (!page.ok()) return ErrorResponse(page.status());
  Result<service::NodeViewPage> result = nodes.ListViews(p.at("project"), p.at("location"), *page);
  if (!result.ok()) return ErrorResponse(result.status());
  // Spliced from the nodes' cached JSON; keys in the order nlohmann's sorted object writes them.
  std::string body = "{";
  if (!result->next_page_token.empty()) {
    body += "\"nextPageToken\":" + json(result->next_page_token).dump() + ",";
  }
  body += "\"nodes\":[";
  for (std::size_t i = 0; i < result->nodes.size(); ++i) {
    if (i > 0) body += ',';
    body += NodeJsonForWire(req, *result->nodes[i]);
  }
  body += "]}";
  return JsonResponse(200, std::move(body));
}

HttpResponse Patch(service::NodeManager& nodes, const HttpRequest& req, const PathParams& p) {
  Result<json> body = ParseBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  // Type-check the body the same way as a create; the masked fields are then copied over.
  Result<service::NodeSpec> spec = DecodeNode(*body);
  if (!spec.ok()) return ErrorResponse(spec.status());
  std::vector<std::string> mask = SplitMask(req.Query("updateMask").value_or(""));
  return ReplyOperation(req, nodes.Update(KeyOf(p), spec->fields, mask));
}

HttpResponse GuestAttributes(service::NodeManager& nodes, const HttpRequest& req,
                             const PathParams& p) {
  Result<json> body = ParseBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  std::string query_path;
  std::vector<std::string> workers;
  if (auto it = body->find("queryPath"); it != body->end() && !it->is_null()) {
    if (!it->is_string()) {
      return ErrorResponse(
          Status::InvalidArgument("Invalid value at 'query_path' (TYPE_STRING), " + it->dump()));
    }
    query_path = it->get<std::string>();
  }
  if (auto it = body->find("workerIds"); it != body->end() && !it->is_null()) {
    if (!it->is_array()) {
      return ErrorResponse(Status::InvalidArgument(
          "Invalid value at 'worker_ids' (repeated string), " + it->dump()));
    }
    for (const json& w : *it) {
      if (!w.is_string()) {
        return ErrorResponse(
            Status::InvalidArgument("Invalid value at 'worker_ids' (TYPE_STRING), " + w.dump()));
      }
      workers.push_back(w.get<std::string>());
    }
  }
  Result<std::shared_ptr<const service::NodeView>> view = nodes.GetView(KeyOf(p));
  if (!view.ok()) return ErrorResponse(view.status());
  return Reply(service::RenderGuestAttributes((*view)->node, query_path, workers));
}

}  // namespace

void RegisterNodeRoutes(Router& router, service::NodeManager& nodes, WorkerThreads& writers) {
  router.Add("GET", kNodes,
             [&nodes](const HttpRequest& req, const PathParams& p) { return List(nodes, req, p); });
  router.Add("GET", kNode, [&nodes](const HttpRequest& req, const PathParams& p) {
    Result<std::shared_ptr<const service::NodeView>> view = nodes.GetView(KeyOf(p));
    if (!view.ok()) return ErrorResponse(view.status());
    return JsonResponse(200, NodeJsonForWire(req, **view));
  });
  router.Add("POST", std::string(kNode) + ":getGuestAttributes",
             [&nodes](const HttpRequest& req, const PathParams& p) {
               return GuestAttributes(nodes, req, p);
             });
  // Mutations: on the writer threads.
  router.AddAsync("POST", kNodes,
                  writers.Offload([&nodes](const HttpRequest& req, const PathParams& p) {
                    return Create(nodes, req, p);
                  }));
  router.AddAsync("DELETE", kNode,
                  writers.Offload([&nodes](const HttpRequest& req, const PathParams& p) {
                    return ReplyOperation(req, nodes.Delete(KeyOf(p)));
                  }));
  router.AddAsync("PATCH", kNode,
                  writers.Offload([&nodes](const HttpRequest& req, const PathParams& p) {
                    return Patch(nodes, req, p);
                  }));
  router.AddAsync("POST", std::string(kNode) + ":start",
                  writers.Offload([&nodes](const HttpRequest& req, const PathParams& p) {
                    Result<json> body = ParseBody(req.body);
                    if (!body.ok()) return ErrorResponse(body.status());
                    return ReplyOperation(req, nodes.Start(KeyOf(p)));
                  }));
  router.AddAsync("POST", std::string(kNode) + ":stop",
                  writers.Offload([&nodes](const HttpRequest& req, const PathParams& p) {
                    Result<json> body = ParseBody(req.body);
                    if (!body.ok()) return ErrorResponse(body.status());
                    return ReplyOperation(req, nodes.Stop(KeyOf(p)));
                  }));
}

}  // namespace tpuemu::api
