// The slice of Compute Engine's API that gcloud's `compute tpus tpu-vm ssh|scp` calls besides the
// TPU API (it always reads the project's commonInstanceMetadata for project-wide ssh-keys and
// enable-oslogin), and `compute project-info add-metadata` to set them: with
// CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE pointing here, gcloud needs no real project.
// Errors in Compute's envelope ({"error": {"code", "message", "errors": [...]}}).
#include <string>

#include "api/api_common.h"
#include "api/google_error.h"
#include "api/routes.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

// Compute Engine's error: Google's envelope plus the legacy `errors` list gcloud prints from.
HttpResponse ComputeError(const Status& status) {
  HttpResponse r = ErrorResponse(status);
  json body = json::parse(r.body, nullptr, false);
  if (body.is_object() && body.contains("error")) {
    std::string reason = status.code() == StatusCode::kFailedPrecondition ? "conditionNotMet"
                         : status.code() == StatusCode::kNotFound         ? "notFound"
                                                                          : "invalid";
    body["error"]["errors"] =
        json::array({{{"domain", "global"}, {"reason", reason}, {"message", status.message()}}});
    if (status.code() == StatusCode::kFailedPrecondition) {
      body["error"]["code"] = 412;
      r.status = 412;
    }
    r.body = body.dump();
  }
  return r;
}

bool ValidProject(const std::string& project) {
  if (project.empty() || project.size() > 63) return false;
  for (char c : project) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

void RegisterComputeRoutes(Router& router, service::ProjectMetadata& projects,
                           WorkerThreads& writers) {
  for (const char* version : {"v1", "beta", "alpha"}) {
    const std::string project = std::string("/compute/") + version + "/projects/{project}";
    router.Add("GET", project, [&projects](const HttpRequest&, const PathParams& p) {
      if (!ValidProject(p.at("project"))) {
        return ComputeError(Status::InvalidArgument("Invalid value for field 'project': '" +
                                                    p.at("project") + "'"));
      }
      Result<json> out = projects.Project(p.at("project"));
      if (!out.ok()) return ComputeError(out.status());
      return JsonResponse(200, *out);
    });
    router.AddAsync("POST", project + "/setCommonInstanceMetadata",
                    writers.Offload([&projects](const HttpRequest& req, const PathParams& p) {
                      if (!ValidProject(p.at("project"))) {
                        return ComputeError(Status::InvalidArgument(
                            "Invalid value for field 'project': '" + p.at("project") + "'"));
                      }
                      json body = json::parse(req.body, nullptr, false, /*ignore_comments=*/false);
                      if (body.is_discarded()) {
                        return ComputeError(Status::InvalidArgument(
                            "Invalid JSON payload received: the body is not a Metadata object"));
                      }
                      Result<json> op = projects.SetCommonInstanceMetadata(p.at("project"), body);
                      if (!op.ok()) return ComputeError(op.status());
                      return JsonResponse(200, *op);
                    }));
    // Every Compute operation here is done when it is returned, so any name reads as done.
    auto done = [](const HttpRequest&, const PathParams& p) {
      return JsonResponse(
          200, service::ProjectMetadata::DoneOperation(p.at("project"), p.at("operation"),
                                                       "setCommonInstanceMetadata"));
    };
    router.Add("GET", project + "/global/operations/{operation}", done);
    router.Add("POST", project + "/global/operations/{operation}/wait", done);
  }
}

}  // namespace tpuemu::api
