// acceleratorTypes, runtimeVersions, locations and the methods tpuemu does not emulate.
#include "api/api_common.h"
#include "api/google_error.h"
#include "api/list_filter.h"
#include "api/routes.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

// Filters, orders and pages a fully built catalog list. Page tokens are offsets ("o<N>").
HttpResponse ListReply(const HttpRequest& req, const char* key, std::vector<json> items,
                       bool unreachable) {
  Result<service::PageRequest> page = ParsePage(req);
  if (!page.ok()) return ErrorResponse(page.status());
  Result<ListFilter> filter = ListFilter::Parse(req.Query("filter").value_or(""));
  if (!filter.ok()) return ErrorResponse(filter.status());
  std::vector<json> kept;
  for (json& item : items) {
    if (filter->Matches(item)) kept.push_back(std::move(item));
  }
  if (std::optional<std::string> order = req.Query("orderBy"); order && !order->empty()) {
    Status s = SortByOrder(*order, kept);
    if (!s.ok()) return ErrorResponse(s);
  }
  Result<int64_t> offset = service::DecodePageToken(service::kOffsetPageToken, page->page_token);
  if (!offset.ok()) return ErrorResponse(offset.status());
  if (static_cast<uint64_t>(*offset) > kept.size()) {
    return ErrorResponse(service::InvalidPageToken(page->page_token));
  }
  const std::size_t first = static_cast<std::size_t>(*offset);
  const std::size_t size = static_cast<std::size_t>(service::PageSize(*page, 500));
  json list = json::array();
  for (std::size_t i = first; i < kept.size() && i < first + size; ++i) list.push_back(kept[i]);
  json out = {{key, list}};
  if (first + size < kept.size()) {
    out["nextPageToken"] =
        service::EncodePageToken(service::kOffsetPageToken, static_cast<int64_t>(first + size));
  }
  if (unreachable) out["unreachable"] = json::array();
  return JsonResponse(200, out);
}

json AcceleratorTypeJson(const std::string& parent, const engine::AcceleratorType& t) {
  return {
      {"name", parent + "/acceleratorTypes/" + t.name},
      {"type", t.name},
      {"acceleratorConfigs",
       json::array({{{"type", engine::Spec(t.generation).api_type}, {"topology", t.topology}}})}};
}

json LocationJson(const std::string& project, const service::Zone& zone) {
  return {{"name", "projects/" + project + "/locations/" + zone.id},
          {"locationId", zone.id},
          {"displayName", zone.id},
          {"labels", {{"region", zone.region}}}};
}

Status ZoneNotFound(const PathParams& p) {
  return Status::NotFound("Resource '" + ParentName(p) + "' was not found");
}

void RegisterLocations(Router& router, const service::Catalog& catalog,
                       const std::string& version) {
  std::string base = "/" + version + "/projects/{project}/locations";
  router.Add("GET", base, [&catalog](const HttpRequest& req, const PathParams& p) {
    std::vector<json> items;
    for (const service::Zone& z : catalog.zones())
      items.push_back(LocationJson(p.at("project"), z));
    return ListReply(req, "locations", std::move(items), /*unreachable=*/false);
  });
  router.Add("GET", base + "/{location}", [&catalog](const HttpRequest&, const PathParams& p) {
    const service::Zone* zone = catalog.FindZone(p.at("location"));
    if (zone == nullptr) return ErrorResponse(ZoneNotFound(p));
    return JsonResponse(200, LocationJson(p.at("project"), *zone));
  });
}

// The legacy v1 catalog the older gcloud words call (`gcloud compute tpus accelerator-types list`,
// `… versions list`): v1 AcceleratorType {name, type} and TensorFlowVersion {name, version}.
// TensorFlow versions are those of the catalog's TensorFlow runtimes ("tpu-vm-tf-2.16.1-pjrt" ->
// "2.16.1") and PyTorch ones ("tpu-vm-pt-1.13" -> "pytorch-1.13").
void RegisterLegacyV1(Router& router, const service::Catalog& catalog) {
  const std::string location = "/v1/projects/{project}/locations/{location}";
  router.Add("GET", location + "/acceleratorTypes",
             [&catalog](const HttpRequest& req, const PathParams& p) {
               if (!catalog.FindZone(p.at("location"))) return ErrorResponse(ZoneNotFound(p));
               std::vector<json> items;
               for (const engine::AcceleratorType& t : catalog.TypesInZone(p.at("location"))) {
                 items.push_back(
                     {{"name", ParentName(p) + "/acceleratorTypes/" + t.name}, {"type", t.name}});
               }
               return ListReply(req, "acceleratorTypes", std::move(items), true);
             });
  router.Add("GET", location + "/acceleratorTypes/{type}",
             [&catalog](const HttpRequest&, const PathParams& p) {
               if (!catalog.FindZone(p.at("location"))) return ErrorResponse(ZoneNotFound(p));
               std::string name = ParentName(p) + "/acceleratorTypes/" + p.at("type");
               Result<engine::AcceleratorType> t = engine::FindAcceleratorType(p.at("type"));
               if (!t.ok() || !catalog.Offers(p.at("location"), *t)) {
                 return ErrorResponse(Status::NotFound("Resource '" + name + "' was not found"));
               }
               return JsonResponse(200, json{{"name", name}, {"type", t->name}});
             });
  auto versions = [&catalog] {
    std::vector<std::string> out;
    for (const std::string& v : catalog.runtime_versions()) {
      std::string version;
      if (v.rfind("tpu-vm-tf-", 0) == 0) {
        version = v.substr(10, v.find('-', 10) - 10);
      } else if (v.rfind("tpu-vm-pt-", 0) == 0) {
        version = "pytorch-" + v.substr(10);
      }
      if (!version.empty() && std::find(out.begin(), out.end(), version) == out.end()) {
        out.push_back(version);
      }
    }
    return out;
  };
  router.Add(
      "GET", location + "/tensorflowVersions",
      [versions](const HttpRequest& req, const PathParams& p) {
        std::vector<json> items;
        for (const std::string& v : versions()) {
          items.push_back({{"name", ParentName(p) + "/tensorflowVersions/" + v}, {"version", v}});
        }
        return ListReply(req, "tensorflowVersions", std::move(items), true);
      });
  router.Add("GET", location + "/tensorflowVersions/{version}",
             [versions](const HttpRequest&, const PathParams& p) {
               std::string name = ParentName(p) + "/tensorflowVersions/" + p.at("version");
               std::vector<std::string> all = versions();
               if (std::find(all.begin(), all.end(), p.at("version")) == all.end()) {
                 return ErrorResponse(Status::NotFound("Resource '" + name + "' was not found"));
               }
               return JsonResponse(200, json{{"name", name}, {"version", p.at("version")}});
             });
}

void RegisterVersionCatalog(Router& router, const service::Catalog& catalog,
                            const std::string& location) {
  router.Add("GET", location + "/acceleratorTypes",
             [&catalog](const HttpRequest& req, const PathParams& p) {
               if (!catalog.FindZone(p.at("location"))) return ErrorResponse(ZoneNotFound(p));
               std::vector<json> items;
               for (const engine::AcceleratorType& t : catalog.TypesInZone(p.at("location"))) {
                 items.push_back(AcceleratorTypeJson(ParentName(p), t));
               }
               return ListReply(req, "acceleratorTypes", std::move(items), true);
             });
  router.Add("GET", location + "/acceleratorTypes/{type}",
             [&catalog](const HttpRequest&, const PathParams& p) {
               if (!catalog.FindZone(p.at("location"))) return ErrorResponse(ZoneNotFound(p));
               std::string name = ParentName(p) + "/acceleratorTypes/" + p.at("type");
               Result<engine::AcceleratorType> t = engine::FindAcceleratorType(p.at("type"));
               if (!t.ok() || !catalog.Offers(p.at("location"), *t)) {
                 return ErrorResponse(Status::NotFound("Resource '" + name + "' was not found"));
               }
               return JsonResponse(200, AcceleratorTypeJson(ParentName(p), *t));
             });
  router.Add(
      "GET", location + "/runtimeVersions",
      [&catalog](const HttpRequest& req, const PathParams& p) {
        if (!catalog.FindZone(p.at("location"))) return ErrorResponse(ZoneNotFound(p));
        std::vector<json> items;
        for (const std::string& v : catalog.runtime_versions()) {
          items.push_back({{"name", ParentName(p) + "/runtimeVersions/" + v}, {"version", v}});
        }
        return ListReply(req, "runtimeVersions", std::move(items), true);
      });
  router.Add("GET", location + "/runtimeVersions/{version}",
             [&catalog](const HttpRequest&, const PathParams& p) {
               if (!catalog.FindZone(p.at("location"))) return ErrorResponse(ZoneNotFound(p));
               std::string name = ParentName(p) + "/runtimeVersions/" + p.at("version");
               if (!catalog.HasRuntimeVersion(p.at("version"))) {
                 return ErrorResponse(Status::NotFound("Resource '" + name + "' was not found"));
               }
               return JsonResponse(200, json{{"name", name}, {"version", p.at("version")}});
             });
  router.Add(
      "POST", location + ":generateServiceIdentity",
      [&catalog](const HttpRequest&, const PathParams& p) {
        if (!catalog.FindZone(p.at("location"))) return ErrorResponse(ZoneNotFound(p));
        uint64_t n = std::hash<std::string>{}(p.at("project")) % 900000000000ull + 100000000000ull;
        return JsonResponse(200, json{{"identity",
                                       {{"email", "service-" + std::to_string(n) +
                                                      "@cloud-tpu.iam.gserviceaccount.com"}}}});
      });
}

}  // namespace

void RegisterCatalogRoutes(Router& router, const service::Catalog& catalog) {
  for (const char* version : {"v2", "v2alpha1"}) {
    RegisterVersionCatalog(router, catalog,
                           "/" + std::string(version) + "/projects/{project}/locations/{location}");
  }
  for (const char* version : {"v2", "v1", "v1alpha1", "v2alpha1"}) {
    RegisterLocations(router, catalog, version);
  }
  RegisterLegacyV1(router, catalog);
}

}  // namespace tpuemu::api
