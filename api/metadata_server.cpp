#include "api/metadata_server.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

#include "service/common/clock.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

constexpr const char* kPrefix = "/computeMetadata/v1";

HttpResponse Text(int status, std::string body, const char* type = "application/text") {
  HttpResponse r;
  r.status = status;
  r.content_type = type;
  r.body = std::move(body);
  r.headers.emplace_back("Metadata-Flavor", "Google");
  r.headers.emplace_back("Server", "Metadata Server for VM");
  return r;
}

std::string ETagOf(const std::string& body) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : body) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

// "network-interfaces" -> "networkInterfaces" (the recursive JSON's spelling).
std::string Camel(const std::string& name) {
  std::string out;
  bool up = false;
  for (char c : name) {
    if (c == '-') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

bool AllDigits(const json& dir) {
  if (!dir.is_object() || dir.empty()) return false;
  for (auto it = dir.begin(); it != dir.end(); ++it) {
    for (char c : it.key()) {
      if (c < '0' || c > '9') return false;
    }
  }
  return true;
}

// A directory as the recursive JSON shows it.
json Recursive(const json& node, bool in_attributes) {
  if (!node.is_object()) return node;
  if (!in_attributes && AllDigits(node)) {
    json list = json::array();
    for (auto it = node.begin(); it != node.end(); ++it) list.push_back(Recursive(*it, false));
    return list;
  }
  json out = json::object();
  for (auto it = node.begin(); it != node.end(); ++it) {
    const bool attributes = !in_attributes && it.key() == "attributes";
    out[in_attributes ? it.key() : Camel(it.key())] = Recursive(*it, in_attributes || attributes);
  }
  return out;
}

void Flatten(const json& node, const std::string& prefix, std::string& out) {
  if (!node.is_object()) {
    out += prefix + " " + node.get<std::string>() + "\n";
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    Flatten(*it, prefix.empty() ? it.key() : prefix + "/" + it.key(), out);
  }
}

std::string Token() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[40];
  std::snprintf(buf, sizeof buf, "ya29.tpuemu-%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

struct Waiter : std::enable_shared_from_this<Waiter> {
  service::WorkerManager* workers;
  service::Scheduler* scheduler;
  std::string node_name;
  int worker;
  HttpRequest request;
  Responder respond;
  std::string last_etag;
  int64_t deadline_ms;

  void Check() {
    HttpResponse r = Current();
    std::string etag;
    for (const auto& [k, v] : r.headers) {
      if (k == "ETag") etag = v;
    }
    if (r.status != 200 || etag != last_etag || service::NowUnixMs() >= deadline_ms) {
      respond(std::move(r));
      return;
    }
    scheduler->At(service::NowUnixMs() + 200, [self = shared_from_this()] { self->Check(); });
  }
  HttpResponse Current() const {
    Result<json> tree = workers->GuestTree(node_name, worker);
    if (!tree.ok()) return Text(503, "the worker is gone\n", "text/html");
    return AnswerMetadata(*tree, request);
  }
};

}  // namespace

HttpResponse AnswerMetadata(const json& tree, const HttpRequest& request) {
  if (request.method != "GET") {
    return Text(405, "Method not allowed\n", "text/html");
  }
  auto flavor = request.Header("metadata-flavor");
  if (!flavor || *flavor != "Google" || request.Header("x-forwarded-for")) {
    return Text(403,
                "Your client does not have permission to get URL " + request.path +
                    " from this server. Missing Metadata-Flavor:Google header.\n",
                "text/html");
  }
  std::string path = request.path;
  if (path == "/" || path.empty()) return Text(200, "computeMetadata/\n");
  if (path.rfind(kPrefix, 0) != 0) return Text(404, "Not Found\n", "text/html");
  path = path.substr(std::string(kPrefix).size());
  if (!path.empty() && path[0] == '/') path.erase(0, 1);
  const bool directory_asked = path.empty() || path.back() == '/';
  while (!path.empty() && path.back() == '/') path.pop_back();

  const bool recursive = request.Query("recursive").value_or("false") == "true";
  std::string alt = request.Query("alt").value_or(recursive ? "json" : "text");

  // The service account's token: minted per request, never in the tree.
  static const std::string kTokenSuffix = "/token";
  if (path.rfind("instance/service-accounts/", 0) == 0 && path.ends_with(kTokenSuffix)) {
    json token = {{"access_token", Token()}, {"expires_in", 3599}, {"token_type", "Bearer"}};
    HttpResponse r = Text(200, token.dump(), "application/json");
    return r;
  }

  const json* node = &tree;
  bool in_attributes = false;
  std::string segment;
  size_t at = 0;
  while (at < path.size()) {
    size_t slash = path.find('/', at);
    segment = path.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    at = slash == std::string::npos ? path.size() : slash + 1;
    if (!node->is_object() || !node->contains(segment)) {
      return Text(404, "Not Found\n", "text/html");
    }
    node = &(*node)[segment];
    if (segment == "attributes") in_attributes = true;
  }

  std::string body;
  std::string type = "application/text";
  if (!node->is_object()) {
    if (alt == "json") {
      body = json(node->get<std::string>()).dump();
      type = "application/json";
    } else {
      body = node->get<std::string>();
    }
  } else if (recursive) {
    const bool attributes_dir = segment == "attributes";
    json view = Recursive(*node, in_attributes || attributes_dir);
    if (alt == "json") {
      body = view.dump();
      type = "application/json";
    } else {
      Flatten(*node, "", body);
    }
  } else {
    (void)directory_asked;
    json names = json::array();
    for (auto it = node->begin(); it != node->end(); ++it) {
      names.push_back(it.key() + (it->is_object() ? "/" : ""));
    }
    if (alt == "json") {
      body = names.dump();
      type = "application/json";
    } else {
      for (const auto& name : names) body += name.get<std::string>() + "\n";
    }
  }
  HttpResponse r = Text(200, body, type.c_str());
  r.headers.emplace_back("ETag", ETagOf(body));
  return r;
}

AsyncHandlerFn MetadataServerHandler(service::WorkerManager& workers, service::Scheduler& scheduler,
                                     std::string network) {
  return [&workers, &scheduler, network = std::move(network)](const HttpRequest& request,
                                                              Responder respond) {
    // Which worker asks: its address on the slice's network (a worker cannot change it: it has
    // no capability over its interfaces).
    const std::string peer = request.remote_address.substr(0, request.remote_address.rfind(':'));
    Result<std::pair<std::string, int>> asking = workers.WorkerAt(network, peer);
    if (!asking.ok()) {
      respond(Text(403, "Forbidden: " + asking.status().message() + "\n", "text/html"));
      return;
    }
    auto waiter = std::make_shared<Waiter>();
    waiter->workers = &workers;
    waiter->scheduler = &scheduler;
    waiter->node_name = asking->first;
    waiter->worker = asking->second;
    waiter->request = request;
    waiter->respond = std::move(respond);
    HttpResponse now = waiter->Current();
    if (request.Query("wait_for_change").value_or("false") != "true" || now.status != 200) {
      waiter->respond(std::move(now));
      return;
    }
    std::string etag;
    for (const auto& [k, v] : now.headers) {
      if (k == "ETag") etag = v;
    }
    waiter->last_etag = request.Query("last_etag").value_or(etag);
    int64_t timeout_sec = 60;
    if (auto t = request.Query("timeout_sec")) {
      timeout_sec = std::clamp<int64_t>(std::atoll(t->c_str()), 1, 60);
    }
    waiter->deadline_ms = service::NowUnixMs() + timeout_sec * 1000;
    waiter->Check();
  };
}

}  // namespace tpuemu::api
