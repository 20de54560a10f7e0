#include "api/auth.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/google_error.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

constexpr char kMissing[] =
    "Request is missing required authentication credential. Expected OAuth 2 access token, "
    "login cookie or other valid authentication credential (tpuemud --auth-tokens is on: send "
    "'Authorization: Bearer <token>').";
constexpr char kInvalid[] =
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "
    "or other valid authentication credential.";

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Which API a path belongs to, by its first segment (auth.h): the TPU API and the emulator's own
// paths, Compute Engine's, or none (open).
enum class Api { kNone, kTpu, kCompute };

// The request path as the router sees it: raw segments split on '/', the custom verb cut off the
// last one, then each percent-decoded (so "%76%32" is "v2" here exactly as it is there).
struct ApiPath {
  std::vector<std::string> segments;  // without the leading empty one
  std::string verb;
  Api api = Api::kNone;
};

bool IsVersionSegment(const std::string& lower) {
  return lower.size() >= 2 && lower[0] == 'v' && std::isdigit(static_cast<unsigned char>(lower[1]));
}

Api ApiOf(const std::vector<std::string>& segments) {
  if (segments.empty()) return Api::kNone;
  const std::string first = Lower(segments.front());
  if (first == "compute") return Api::kCompute;
  if (IsVersionSegment(first) || (!first.empty() && first.front() == '_')) return Api::kTpu;
  return Api::kNone;
}

ApiPath SplitPath(const HttpRequest& request) {
  std::string_view raw = request.path;
  if (!request.target.empty()) {
    raw = request.target;
    raw = raw.substr(0, raw.find('?'));
  }
  ApiPath out;
  if (!raw.empty() && raw.front() == '/') raw.remove_prefix(1);
  std::vector<std::string_view> parts;
  while (true) {
    std::size_t slash = raw.find('/');
    parts.push_back(raw.substr(0, slash));
    if (slash == std::string_view::npos) break;
    raw.remove_prefix(slash + 1);
  }
  std::string_view& last = parts.back();
  if (std::size_t colon = last.find(':'); colon != std::string_view::npos) {
    out.verb = PercentDecode(last.substr(colon + 1), false);
    last = last.substr(0, colon);
  }
  for (std::string_view part : parts) out.segments.push_back(PercentDecode(part, false));
  out.api = ApiOf(out.segments);
  return out;
}

// The index of the project segment: /v2/projects/{p}/... and /compute/v1/projects/{p}/....
std::size_t ProjectIndex(const ApiPath& path) { return path.api == Api::kCompute ? 3 : 2; }

// The project the path names, or nullptr for a path without one.
const std::string* ProjectOf(const ApiPath& path) {
  const std::size_t i = ProjectIndex(path);
  if (path.segments.size() <= i || path.segments[i - 1] != "projects") return nullptr;
  return &path.segments[i];
}

bool IsRead(const std::string& method) { return method == "GET" || method == "HEAD"; }

// The verb of a permission for a REST method on a collection (`item` false) or one of its items.
std::string RestVerb(const std::string& method, bool item) {
  if (IsRead(method)) return item ? "get" : "list";
  if (method == "POST" && !item) return "create";
  if (method == "PATCH") return "update";
  if (method == "DELETE") return "delete";
  return Lower(method);
}

// Compute Engine's permission names (cloud.google.com/compute/docs/reference/rest/v1/projects,
// .../globalOperations): segments are [compute, version, projects, p, rest...]. A method on the
// project is compute.projects.<method> ("setCommonInstanceMetadata"); operations take their scope
// ("globalOperations"); waiting on an operation needs compute.*Operations.get, as in Compute.
std::string ComputePermission(const HttpRequest& request, const ApiPath& path) {
  const std::vector<std::string>& s = path.segments;
  if (ProjectOf(path) == nullptr) return "compute.unknown." + Lower(request.method);
  std::vector<std::string> rest(s.begin() + 4, s.end());
  if (rest.empty()) return "compute.projects." + RestVerb(request.method, true);
  if (rest.size() == 1) return "compute.projects." + rest[0];
  std::string scope;
  if (rest[0] == "global") {
    scope = "global";
    rest.erase(rest.begin());
  } else if ((rest[0] == "zones" || rest[0] == "regions") && rest.size() >= 3) {
    scope = rest[0] == "zones" ? "zone" : "region";
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty()) return "compute.projects." + RestVerb(request.method, true);
  std::string collection = rest[0];
  const bool operations = collection == "operations" && !scope.empty();
  if (operations) collection = scope + "Operations";
  std::string verb = rest.size() >= 3 ? rest[2] : RestVerb(request.method, rest.size() == 2);
  if (!path.verb.empty()) verb = path.verb;
  if (operations && verb == "wait") verb = "get";
  return "compute." + collection + "." + verb;
}

// "tpu.nodes.create"-style name for the message of a 403 (Google's wording; the emulator does
// not model IAM beyond viewer/editor).
std::string PermissionFor(const HttpRequest& request, const ApiPath& path) {
  if (path.api == Api::kCompute) return ComputePermission(request, path);
  // segments: [version, collection, id, collection, id, ...]
  const std::size_t n = path.segments.size();
  if (n < 2) return "tpu.unknown." + Lower(request.method);
  const bool item = (n - 1) % 2 == 0;
  std::string collection = path.segments[item ? n - 2 : n - 1];
  if (collection.starts_with("_")) collection = collection.substr(1);
  std::string verb = path.verb.empty() ? RestVerb(request.method, item) : path.verb;
  return "tpu." + collection + "." + verb;
}

// The path after its API prefix ("v2", "compute/v1"): "projects/p/locations/z/nodes".
std::string ResourceOf(const ApiPath& path) {
  std::string out;
  for (std::size_t i = ProjectIndex(path) - 1; i < path.segments.size(); ++i) {
    if (!out.empty()) out += '/';
    out += path.segments[i];
  }
  return out.empty() ? "/" : out;
}

Status Denied(const HttpRequest& request, const ApiPath& path, const std::string& why) {
  return Status::PermissionDenied("Permission '" + PermissionFor(request, path) +
                                  "' denied on resource '" + ResourceOf(path) +
                                  "' (or it may not exist): " + why);
}

}  // namespace

Result<AuthPolicy> AuthPolicy::Parse(std::string_view json_text) {
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument("auth tokens: the file is not a JSON object");
  }
  auto list = doc.find("tokens");
  if (list == doc.end() || !list->is_array()) {
    return Status::InvalidArgument("auth tokens: 'tokens' must be an array");
  }
  AuthPolicy policy;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& entry = (*list)[i];
    const std::string where = "auth tokens: tokens[" + std::to_string(i) + "]";
    if (!entry.is_object()) return Status::InvalidArgument(where + " must be an object");
    auto token = entry.find("token");
    if (token == entry.end() || !token->is_string()) {
      return Status::InvalidArgument(where + ".token must be a string");
    }
    const std::string& text = token->get_ref<const std::string&>();
    if (text.empty() || text.size() > 4096 ||
        !std::all_of(text.begin(), text.end(), [](unsigned char c) { return c > 32 && c < 127; })) {
      return Status::InvalidArgument(where +
                                     ".token must be 1..4096 printable characters, no spaces");
    }
    AuthGrant grant;
    auto role = entry.find("role");
    if (role == entry.end() || !role->is_string() || (*role != "viewer" && *role != "editor")) {
      return Status::InvalidArgument(where + ".role must be \"viewer\" or \"editor\"");
    }
    grant.role = *role == "editor" ? AuthRole::kEditor : AuthRole::kViewer;
    auto projects = entry.find("projects");
    if (projects == entry.end() || !projects->is_array() || projects->empty()) {
      return Status::InvalidArgument(where +
                                     ".projects must be a non-empty array of project ids or \"*\"");
    }
    if (auto user = entry.find("user"); user != entry.end()) {
      if (!user->is_string() || user->get_ref<const std::string&>().empty() ||
          user->get_ref<const std::string&>().size() > 256) {
        return Status::InvalidArgument(where + ".user must be a name or e-mail, 1..256 characters");
      }
      grant.user = user->get<std::string>();
    }
    for (const json& p : *projects) {
      if (!p.is_string() || p.get_ref<const std::string&>().empty()) {
        return Status::InvalidArgument(where + ".projects must hold non-empty strings");
      }
      grant.projects.insert(p.get<std::string>());
    }
    if (!policy.tokens_.emplace(text, std::move(grant)).second) {
      return Status::InvalidArgument(where + ".token repeats an earlier token");
    }
  }
  return policy;
}

Result<AuthPolicy> AuthPolicy::Load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status::NotFound("auth tokens: cannot read " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  Result<AuthPolicy> policy = Parse(text.str());
  if (!policy.ok()) {
    return Status::InvalidArgument(file.string() + ": " + policy.status().message());
  }
  return policy;
}

namespace {

// The token of an `Authorization: Bearer <token>` header value; nullopt when it is malformed.
std::optional<std::string> BearerToken(std::string_view value) {
  if (value.size() < 7 || Lower(value.substr(0, 7)) != "bearer ") return std::nullopt;
  value.remove_prefix(7);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return std::string(value);
}

// base64url without padding (RFC 4648 §5) to bytes; nullopt for any other character.
std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '-'             ? 62
            : c == '_'             ? 63
                                   : -1;
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

// The request's bearer token: the Authorization header's, or — for a WebSocket, whose browser
// API cannot set headers — a "bearer.<base64url token>" item of Sec-WebSocket-Protocol (as
// Kubernetes' API server takes it). nullopt when there is none or it is malformed.
std::optional<std::string> RequestToken(const HttpRequest& request) {
  if (std::optional<std::string> header = request.Header("authorization")) {
    return BearerToken(*header);
  }
  std::optional<std::string> protocols = request.Header("sec-websocket-protocol");
  if (!protocols || !request.Header("upgrade")) return std::nullopt;
  for (std::string_view item : HeaderItems(*protocols)) {
    if (item.rfind("bearer.", 0) == 0) return Base64UrlDecode(item.substr(7));
  }
  return std::nullopt;
}

// The hardware catalog (/_emulator/hardware) and the TPU comparison computed from it
// (GET /_emulator/compare) belong to no project and tell nothing about anyone's resources, like
// acceleratorTypes: any valid token may read them.
bool IsSharedCatalogRead(const HttpRequest& request, const ApiPath& path) {
  return IsRead(request.method) && path.segments.size() == 2 &&
         Lower(path.segments[0]) == "_emulator" &&
         (path.segments[1] == "hardware" || path.segments[1] == "compare");
}

}  // namespace

bool AuthPolicy::GrantsEveryProject(const HttpRequest& request) const {
  std::optional<std::string> token = RequestToken(request);
  if (!token) return false;
  auto found = tokens_.find(*token);
  return found != tokens_.end() && found->second.projects.count("*") > 0;
}

bool AuthPolicy::IsProtected(const HttpRequest& request) {
  return SplitPath(request).api != Api::kNone;
}

Status AuthPolicy::Check(const HttpRequest& request) const {
  ApiPath path = SplitPath(request);
  if (path.api == Api::kNone) return Status::Ok();

  std::optional<std::string> token = RequestToken(request);
  if (!token) return Status::Unauthenticated(kMissing);
  auto found = tokens_.find(*token);
  if (found == tokens_.end()) return Status::Unauthenticated(kInvalid);
  const AuthGrant& grant = found->second;
  const bool all_projects = grant.projects.count("*") > 0;

  if (const std::string* named = ProjectOf(path)) {
    const std::string& project = *named;
    if (!all_projects && (project == "-" || grant.projects.count(project) == 0)) {
      return Denied(request, path, "the token is not granted project '" + project + "'.");
    }
  } else if (!all_projects && !IsSharedCatalogRead(request, path)) {
    return Denied(request, path,
                  "a path without a project needs a token granted every project (\"*\").");
  }
  // A terminal (a WebSocket upgrade) is a login: an editor's, as every write.
  const bool write = !IsRead(request.method) || request.Header("upgrade").has_value();
  if (write && grant.role != AuthRole::kEditor) {
    return Denied(request, path, "the token's role is viewer (read-only).");
  }
  return Status::Ok();
}

std::string AuthPolicy::UserOf(const HttpRequest& request) const {
  std::optional<std::string> token = RequestToken(request);
  if (!token) return "";
  auto found = tokens_.find(*token);
  return found == tokens_.end() ? "" : found->second.user;
}

HttpResponse AuthErrorResponse(const Status& status) {
  HttpResponse response = ErrorResponse(status);
  if (status.code() == StatusCode::kUnauthenticated) {
    std::string challenge = "Bearer realm=\"tpuemu\"";
    if (status.message() == kInvalid) challenge += ", error=\"invalid_token\"";
    response.headers.emplace_back("WWW-Authenticate", challenge);
  }
  response.route = "auth";
  return response;
}

AsyncHandlerFn RequireAuth(const AuthPolicy& policy, AsyncHandlerFn inner) {
  return [&policy, inner = std::move(inner)](const HttpRequest& request, Responder respond) {
    Status s = policy.Check(request);
    if (!s.ok()) return respond(AuthErrorResponse(s));
    if (request.Header("upgrade")) {  // a terminal logs its token's person in
      HttpRequest named = request;
      named.principal = policy.UserOf(request);
      return inner(named, std::move(respond));
    }
    if (!AuthPolicy::IsProtected(request) && !policy.GrantsEveryProject(request)) {
      HttpRequest narrowed = request;
      narrowed.sees_every_project = false;
      return inner(narrowed, std::move(respond));
    }
    inner(request, std::move(respond));
  };
}

}  // namespace tpuemu::api
