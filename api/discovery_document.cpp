#include "api/discovery_document.h"

#include <deque>
#include <sstream>
#include <vector>

namespace tpuemu::api {
namespace {

using nlohmann::json;

constexpr char kScope[] = "https://www.googleapis.com/auth/cloud-platform";

enum Versions : unsigned { kV2 = 1, kV2Alpha1 = 2, kBoth = 3 };

// One REST method. `flat` is the path after the version with every variable as {…Id}; the path
// parameter (`param`, "name" or "parent") spans the flat path up to its last variable.
struct Method {
  const char* resource;  // under projects.locations: "" (the location itself), "nodes", …
  const char* name;      // "create"
  const char* http;
  const char* param;
  const char* flat;
  const char* query;  // comma-separated query parameters
  const char* request;
  const char* response;
  unsigned versions;
  const char* description;
};

constexpr char kLoc[] = "projects/{projectsId}/locations/{locationsId}";

// The methods of google.cloud.tpu.v2.Tpu and v2alpha1.Tpu, plus Locations and Operations.
const std::vector<Method>& Methods() {
  static const std::vector<Method> methods = [] {
    const std::string loc = kLoc;
    static std::deque<std::string> paths;  // keeps the built flat paths alive (stable)
    auto p = [](std::string s) {
      paths.push_back(std::move(s));
      return paths.back().c_str();
    };
    return std::vector<Method>{
        {"", "list", "GET", "name", p("projects/{projectsId}/locations"),
         "filter,pageSize,pageToken", nullptr, "ListLocationsResponse", kBoth,
         "Lists information about the supported locations for this service."},
        {"", "get", "GET", "name", p(loc), "", nullptr, "Location", kBoth,
         "Gets information about a location."},
        {"", "generateServiceIdentity", "POST", "parent", p(loc + ":generateServiceIdentity"), "",
         "GenerateServiceIdentityRequest", "GenerateServiceIdentityResponse", kBoth,
         "Generates the Cloud TPU service identity for the project."},
        {"acceleratorTypes", "list", "GET", "parent", p(loc + "/acceleratorTypes"),
         "filter,orderBy,pageSize,pageToken", nullptr, "ListAcceleratorTypesResponse", kBoth,
         "Lists accelerator types supported by this API."},
        {"acceleratorTypes", "get", "GET", "name",
         p(loc + "/acceleratorTypes/{acceleratorTypesId}"), "", nullptr, "AcceleratorType", kBoth,
         "Gets AcceleratorType."},
        {"runtimeVersions", "list", "GET", "parent", p(loc + "/runtimeVersions"),
         "filter,orderBy,pageSize,pageToken", nullptr, "ListRuntimeVersionsResponse", kBoth,
         "Lists runtime versions supported by this API."},
        {"runtimeVersions", "get", "GET", "name", p(loc + "/runtimeVersions/{runtimeVersionsId}"),
         "", nullptr, "RuntimeVersion", kBoth, "Gets a runtime version."},
        {"nodes", "list", "GET", "parent", p(loc + "/nodes"), "pageSize,pageToken", nullptr,
         "ListNodesResponse", kBoth, "Lists nodes."},
        {"nodes", "get", "GET", "name", p(loc + "/nodes/{nodesId}"), "", nullptr, "Node", kBoth,
         "Gets the details of a node."},
        {"nodes", "create", "POST", "parent", p(loc + "/nodes"), "nodeId", "Node", "Operation", kV2,
         "Creates a node."},
        {"nodes", "create", "POST", "parent", p(loc + "/nodes"), "nodeId,requestId", "Node",
         "Operation", kV2Alpha1, "Creates a node."},
        {"nodes", "delete", "DELETE", "name", p(loc + "/nodes/{nodesId}"), "", nullptr, "Operation",
         kV2, "Deletes a node."},
        {"nodes", "delete", "DELETE", "name", p(loc + "/nodes/{nodesId}"), "requestId", nullptr,
         "Operation", kV2Alpha1, "Deletes a node."},
        {"nodes", "patch", "PATCH", "name", p(loc + "/nodes/{nodesId}"), "updateMask", "Node",
         "Operation", kBoth, "Updates the configurations of a node."},
        {"nodes", "start", "POST", "name", p(loc + "/nodes/{nodesId}:start"), "",
         "StartNodeRequest", "Operation", kBoth, "Starts a node."},
        {"nodes", "stop", "POST", "name", p(loc + "/nodes/{nodesId}:stop"), "", "StopNodeRequest",
         "Operation", kBoth,
         "Stops a node. This operation is only available with single TPU "
         "nodes."},
        {"nodes", "getGuestAttributes", "POST", "name",
         p(loc + "/nodes/{nodesId}:getGuestAttributes"), "", "GetGuestAttributesRequest",
         "GetGuestAttributesResponse", kBoth, "Retrieves the guest attributes for the node."},
        {"nodes", "simulateMaintenanceEvent", "POST", "name",
         p(loc + "/nodes/{nodesId}:simulateMaintenanceEvent"), "",
         "SimulateMaintenanceEventRequest", "Operation", kV2Alpha1,
         "Simulates a maintenance event."},
        {"nodes", "performMaintenance", "POST", "name",
         p(loc + "/nodes/{nodesId}:performMaintenance"), "", "PerformMaintenanceRequest",
         "Operation", kV2Alpha1, "Perform manual maintenance on a node."},
        {"queuedResources", "list", "GET", "parent", p(loc + "/queuedResources"),
         "pageSize,pageToken", nullptr, "ListQueuedResourcesResponse", kBoth,
         "Lists queued resources."},
        {"queuedResources", "get", "GET", "name", p(loc + "/queuedResources/{queuedResourcesId}"),
         "", nullptr, "QueuedResource", kBoth, "Gets details of a queued resource."},
        {"queuedResources", "create", "POST", "parent", p(loc + "/queuedResources"),
         "queuedResourceId,requestId", "QueuedResource", "Operation", kBoth,
         "Creates a QueuedResource TPU instance."},
        {"queuedResources", "delete", "DELETE", "name",
         p(loc + "/queuedResources/{queuedResourcesId}"), "force,requestId", nullptr, "Operation",
         kBoth, "Deletes a QueuedResource TPU instance."},
        {"queuedResources", "reset", "POST", "name",
         p(loc + "/queuedResources/{queuedResourcesId}:reset"), "", "ResetQueuedResourceRequest",
         "Operation", kBoth, "Resets a QueuedResource TPU instance"},
        {"queuedResources", "performMaintenanceQueuedResource", "POST", "name",
         p(loc + "/queuedResources/{queuedResourcesId}:performMaintenanceQueuedResource"), "",
         "PerformMaintenanceQueuedResourceRequest", "Operation", kV2Alpha1,
         "Perform manual maintenance on specific nodes of a QueuedResource."},
        {"reservations", "list", "GET", "parent", p(loc + "/reservations"), "pageSize,pageToken",
         nullptr, "ListReservationsResponse", kV2Alpha1,
         "Retrieves the reservations for the given project in the given location."},
        {"operations", "list", "GET", "name", p(loc + "/operations"), "filter,pageSize,pageToken",
         nullptr, "ListOperationsResponse", kBoth,
         "Lists operations that match the specified filter in the request."},
        {"operations", "get", "GET", "name", p(loc + "/operations/{operationsId}"), "", nullptr,
         "Operation", kBoth, "Gets the latest state of a long-running operation."},
        {"operations", "delete", "DELETE", "name", p(loc + "/operations/{operationsId}"), "",
         nullptr, "Empty", kBoth, "Deletes a long-running operation."},
        {"operations", "cancel", "POST", "name", p(loc + "/operations/{operationsId}:cancel"), "",
         nullptr, "Empty", kBoth, "Starts asynchronous cancellation on a long-running operation."},
    };
  }();
  return methods;
}

json QueryParameter(const std::string& name) {
  if (name == "pageSize") return {{"location", "query"}, {"type", "integer"}, {"format", "int32"}};
  if (name == "force") return {{"location", "query"}, {"type", "boolean"}};
  if (name == "updateMask") {
    return {{"location", "query"}, {"type", "string"}, {"format", "google-fieldmask"}};
  }
  return {{"location", "query"}, {"type", "string"}};
}

json BuildMethod(const Method& m, const std::string& version) {
  const std::string flat = m.flat;
  const std::size_t last = flat.rfind('}');
  // {projectsId} -> [^/]+ for the path parameter's pattern.
  std::string pattern = "^";
  for (std::size_t i = 0; i <= last; ++i) {
    if (flat[i] == '{') {
      pattern += "[^/]+";
      i = flat.find('}', i);
    } else {
      pattern += flat[i];
    }
  }
  pattern += "$";
  json parameters = {{m.param,
                      {{"location", "path"},
                       {"required", true},
                       {"type", "string"},
                       {"pattern", pattern},
                       {"description", std::string("Required. The resource ") + m.param + "."}}}};
  std::stringstream query(m.query);
  for (std::string q; std::getline(query, q, ',');) {
    if (!q.empty()) parameters[q] = QueryParameter(q);
  }
  std::string resource = "tpu.projects.locations";
  if (*m.resource != '\0') resource += std::string(".") + m.resource;
  json out = {{"id", resource + "." + m.name},
              {"path", version + "/{+" + m.param + "}" + flat.substr(last + 1)},
              {"flatPath", version + "/" + flat},
              {"httpMethod", m.http},
              {"parameters", std::move(parameters)},
              {"parameterOrder", json::array({m.param})},
              {"response", {{"$ref", m.response}}},
              {"scopes", json::array({kScope})},
              {"description", m.description}};
  if (m.request != nullptr) out["request"] = {{"$ref", m.request}};
  return out;
}

// A field type from its words ("array", "map", "string", …) starting at `at`.
json ParseType(const std::vector<std::string>& words, std::size_t& at) {
  const std::string& word = words.at(at++);
  if (word == "string" || word == "boolean" || word == "number") return {{"type", word}};
  if (word == "integer") return {{"type", "integer"}, {"format", "int32"}};
  if (word == "int64") return {{"type", "string"}, {"format", "int64"}};
  if (word == "any") return {{"type", "any"}};
  if (word == "array") return {{"type", "array"}, {"items", ParseType(words, at)}};
  if (word == "map") return {{"type", "object"}, {"additionalProperties", ParseType(words, at)}};
  if (word == "enum") {
    json values =
        std::vector<std::string>(words.begin() + static_cast<std::ptrdiff_t>(at), words.end());
    at = words.size();
    return {{"type", "string"}, {"enum", std::move(values)}};
  }
  return {{"$ref", word}};
}

// Keeps a line marked '+' (v2alpha1 only) or '-' (v2 only) for its version, and strips the mark.
bool ForThisVersion(std::string& word, bool alpha) {
  if (word.empty()) return true;
  if (word[0] == '+' || word[0] == '-') {
    const bool keep = (word[0] == '+') == alpha;
    word.erase(0, 1);
    return keep;
  }
  return true;
}

json BuildSchemas(bool alpha) {
  json schemas = json::object();
  std::stringstream text(DiscoverySchemaText());
  json* current = nullptr;
  bool skip_schema = false;
  for (std::string line; std::getline(text, line);) {
    std::stringstream words_in(line);
    std::vector<std::string> words;
    for (std::string w; words_in >> w;) words.push_back(w);
    if (words.empty()) continue;
    if (words.size() == 2 && words[1] == "{") {
      skip_schema = !ForThisVersion(words[0], alpha);
      current = skip_schema ? nullptr : &schemas[words[0]];
      if (current != nullptr) {
        *current = {{"id", words[0]}, {"type", "object"}, {"properties", json::object()}};
      }
      continue;
    }
    if (words[0] == "}") {
      current = nullptr;
      continue;
    }
    if (current == nullptr || !ForThisVersion(words[0], alpha)) continue;
    std::size_t at = 1;
    (*current)["properties"][words[0]] = ParseType(words, at);
  }
  return schemas;
}

json StandardParameters() {
  json string_query = {{"location", "query"}, {"type", "string"}};
  json out;
  for (const char* name : {"$.xgafv", "access_token", "callback", "fields", "key", "oauth_token",
                           "quotaUser", "uploadType", "upload_protocol"}) {
    out[name] = string_query;
  }
  out["alt"] = {{"location", "query"},
                {"type", "string"},
                {"default", "json"},
                {"enum", {"json", "media", "proto"}}};
  out["prettyPrint"] = {{"location", "query"}, {"type", "boolean"}, {"default", "true"}};
  return out;
}

}  // namespace

Result<json> BuildDiscoveryDocument(const std::string& requested, const std::string& root_url) {
  std::string version = requested == "v2alpha" ? "v2alpha1" : requested;
  if (version != "v2" && version != "v2alpha1") {
    return Status::NotFound("Discovery document for tpu version '" + requested +
                            "' was not found: tpuemu serves v2 and v2alpha1.");
  }
  const bool alpha = version == "v2alpha1";
  json locations = {{"methods", json::object()}, {"resources", json::object()}};
  for (const Method& m : Methods()) {
    if ((m.versions & (alpha ? kV2Alpha1 : kV2)) == 0) continue;
    json& methods =
        *m.resource == '\0' ? locations["methods"] : locations["resources"][m.resource]["methods"];
    methods[m.name] = BuildMethod(m, version);
  }
  return json{
      {"kind", "discovery#restDescription"},
      {"discoveryVersion", "v1"},
      {"id", "tpu:" + version},
      {"name", "tpu"},
      {"canonicalName", "TPU"},
      {"version", version},
      {"revision", "tpuemu"},
      {"title", "Cloud TPU API (tpuemu)"},
      {"description",
       "TPU API provides customers with access to Google TPU technology. Served "
       "by tpuemu, a local emulator."},
      {"documentationLink", "https://cloud.google.com/tpu/"},
      {"ownerDomain", "google.com"},
      {"ownerName", "Google"},
      {"protocol", "rest"},
      {"rootUrl", root_url},
      {"mtlsRootUrl", root_url},
      {"servicePath", ""},
      {"basePath", ""},
      {"baseUrl", root_url},
      {"batchPath", "batch"},
      {"fullyEncodeReservedExpansion", true},
      {"auth",
       {{"oauth2",
         {{"scopes",
           {{kScope,
             {{"description",
               "See, edit, configure, and "
               "delete your Google Cloud data."}}}}}}}}},
      {"parameters", StandardParameters()},
      {"resources", {{"projects", {{"resources", {{"locations", std::move(locations)}}}}}}},
      {"schemas", BuildSchemas(alpha)},
  };
}

}  // namespace tpuemu::api
