// The discovery document (api/discovery_document.h) at the two URLs clients fetch it from:
// GET /$discovery/rest?version=v2 (googleapiclient, SkyPilot, axlearn; Ray asks for v2alpha) and
// GET /discovery/v1/apis/tpu/{version}/rest. Open without a token, like Google's.
#include "api/api_common.h"
#include "api/discovery_document.h"
#include "api/google_error.h"
#include "api/routes.h"

namespace tpuemu::api {
namespace {

// "http://<the Host the client used>/": the document must send the client back to us.
std::string RootUrl(const HttpRequest& req) {
  std::string host = req.Header("host").value_or("127.0.0.1");
  if (host.empty() || host.find_first_of(" /\\\"") != std::string::npos) host = "127.0.0.1";
  const std::string scheme =
      req.Header("x-forwarded-proto").value_or("") == "https" ? "https" : "http";
  return scheme + "://" + host + "/";
}

HttpResponse Document(const HttpRequest& req, const std::string& version) {
  return Reply(BuildDiscoveryDocument(version, RootUrl(req)));
}

}  // namespace

void RegisterDiscoveryRoutes(Router& router) {
  router.Add("GET", "/$discovery/rest", [](const HttpRequest& req, const PathParams&) {
    return Document(req, req.Query("version").value_or("v2"));
  });
  router.Add(
      "GET", "/discovery/v1/apis/tpu/{version}/rest",
      [](const HttpRequest& req, const PathParams& p) { return Document(req, p.at("version")); });
}

}  // namespace tpuemu::api
