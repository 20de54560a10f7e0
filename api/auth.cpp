#include "api/auth.h"

#include <algorithm>
#include <cctype>
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

// The request path as the router sees it: raw segments split on '/', the custom verb cut off the
// last one, then each percent-decoded (so "%76%32" is "v2" here exactly as it is there).
struct ApiPath {
  std::vector<std::string> segments;  // without the leading empty one
  std::string verb;
};

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
  return out;
}

bool IsApiSegment(const std::string& first) {
  std::string s = Lower(first);
  if (!s.empty() && s.front() == '_') return true;
  return s.size() >= 2 && s[0] == 'v' && std::isdigit(static_cast<unsigned char>(s[1]));
}

bool IsRead(const std::string& method) { return method == "GET" || method == "HEAD"; }

// "tpu.nodes.create"-style name for the message of a 403 (Google's wording; the emulator does
// not model IAM beyond viewer/editor).
std::string PermissionFor(const HttpRequest& request, const ApiPath& path) {
  // segments: [version, collection, id, collection, id, ...]
  const std::size_t n = path.segments.size();
  if (n < 2) return "tpu.unknown." + Lower(request.method);
  const bool item = (n - 1) % 2 == 0;
  std::string collection = path.segments[item ? n - 2 : n - 1];
  if (collection.starts_with("_")) collection = collection.substr(1);
  std::string verb = path.verb;
  if (verb.empty()) {
    if (request.method == "GET" || request.method == "HEAD")
      verb = item ? "get" : "list";
    else if (request.method == "POST" && !item)
      verb = "create";
    else if (request.method == "PATCH")
      verb = "update";
    else if (request.method == "DELETE")
      verb = "delete";
    else
      verb = Lower(request.method);
  }
  return "tpu." + collection + "." + verb;
}

std::string ResourceOf(const ApiPath& path) {
  std::string out;
  for (std::size_t i = 1; i < path.segments.size(); ++i) {
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
  std::optional<std::string> header = request.Header("authorization");
  std::optional<std::string> token = header ? BearerToken(*header) : std::nullopt;
  if (!token) return false;
  auto found = tokens_.find(*token);
  return found != tokens_.end() && found->second.projects.count("*") > 0;
}

bool AuthPolicy::IsProtected(const HttpRequest& request) {
  ApiPath path = SplitPath(request);
  return !path.segments.empty() && IsApiSegment(path.segments.front());
}

Status AuthPolicy::Check(const HttpRequest& request) const {
  ApiPath path = SplitPath(request);
  if (path.segments.empty() || !IsApiSegment(path.segments.front())) return Status::Ok();

  std::optional<std::string> header = request.Header("authorization");
  if (!header) return Status::Unauthenticated(kMissing);
  std::optional<std::string> token = BearerToken(*header);
  if (!token) return Status::Unauthenticated(kMissing);
  auto found = tokens_.find(*token);
  if (found == tokens_.end()) return Status::Unauthenticated(kInvalid);
  const AuthGrant& grant = found->second;
  const bool all_projects = grant.projects.count("*") > 0;

  const std::vector<std::string>& s = path.segments;
  if (s.size() >= 3 && s[1] == "projects") {
    const std::string& project = s[2];
    if (!all_projects && (project == "-" || grant.projects.count(project) == 0)) {
      return Denied(request, path, "the token is not granted project '" + project + "'.");
    }
  } else if (!all_projects && !IsSharedCatalogRead(request, path)) {
    return Denied(request, path,
                  "a path without a project needs a token granted every project (\"*\").");
  }
  if (!IsRead(request.method) && grant.role != AuthRole::kEditor) {
    return Denied(request, path, "the token's role is viewer (read-only).");
  }
  return Status::Ok();
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
    if (!AuthPolicy::IsProtected(request) && !policy.GrantsEveryProject(request)) {
      HttpRequest narrowed = request;
      narrowed.sees_every_project = false;
      return inner(narrowed, std::move(respond));
    }
    inner(request, std::move(respond));
  };
}

}  // namespace tpuemu::api
