// Bearer-token auth (tpuemud --auth-tokens FILE), off unless a token file is given.
//
// Token file (JSON):
//   {"tokens": [{"token": "t1", "projects": ["p1", "p2"], "role": "editor"},
//               {"token": "ro", "projects": ["*"], "role": "viewer"}]}
// `projects` lists project ids; "*" grants every project. `role` is "viewer" (GET/HEAD only) or
// "editor" (every method). Tokens must be unique, 1..4096 printable non-space characters.
//
// Which requests need a token: every path whose first segment is an API version ("v1", "v2",
// "v2alpha1", ...) or starts with '_' ("/_emulator/reset"), compared after percent-decoding and
// case-insensitively, so an encoded or upper-case spelling cannot slip past. Everything else
// (/healthz, /readyz, /metrics, the dashboard's static files) stays open, but an open request
// whose token is not granted every project ("*") — none at all, for instance — reaches the
// handler with HttpRequest::sees_every_project = false: GET /metrics then shows only its
// aggregate, project-free series (a project's per-node series are at GET
// /v2/projects/{p}/metrics, behind the rules below).
// Rules, in order:
//   no or malformed `Authorization: Bearer <token>` -> 401 UNAUTHENTICATED (+ WWW-Authenticate)
//   unknown token                                    -> 401 UNAUTHENTICATED (+ WWW-Authenticate)
//   /v*/projects/{p}/...: p not granted              -> 403 PERMISSION_DENIED
//     (`locations/-` lists stay inside p, so they need p only; project "-" needs "*")
//   a path without a project (/_emulator/reset, ...) -> needs a "*" token, else 403; except that
//     any valid token may read GET /_emulator/hardware and GET /_emulator/compare (catalog data
//     of no project)
//   a viewer's write (any method but GET/HEAD)       -> 403 PERMISSION_DENIED
// Errors use Google's envelope; the 403 message names a `tpu.<collection>.<verb>` permission.
//
// Threading: an AuthPolicy is immutable after Load/Parse; Check and the wrapped handler may run
// concurrently from any thread. The wrapped handler borrows the policy (it must outlive it).
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "api/http_types.h"
#include "base/status.h"

namespace tpuemu::api {

enum class AuthRole { kViewer, kEditor };

struct AuthGrant {
  std::set<std::string> projects;  // "*" = every project
  AuthRole role = AuthRole::kViewer;
};

class AuthPolicy {
 public:
  // INVALID_ARGUMENT naming the entry and field on a malformed document; NOT_FOUND for a file
  // that cannot be read.
  static Result<AuthPolicy> Parse(std::string_view json_text);
  static Result<AuthPolicy> Load(const std::filesystem::path& file);

  // True when `request` is an API request (see above) and so needs a token.
  static bool IsProtected(const HttpRequest& request);
  // OK, or UNAUTHENTICATED / PERMISSION_DENIED with Google's wording. Open paths are always OK.
  Status Check(const HttpRequest& request) const;
  // Whether `request` carries a bearer token granted every project ("*"), whatever its role.
  bool GrantsEveryProject(const HttpRequest& request) const;

  std::size_t size() const { return tokens_.size(); }

 private:
  std::unordered_map<std::string, AuthGrant> tokens_;
};

// The error response for a failed Check: Google's envelope, and `WWW-Authenticate: Bearer ...`
// on 401.
HttpResponse AuthErrorResponse(const Status& status);

// Wraps the server's handler: requests failing policy.Check are answered here; the others go on to
// `inner` untouched, but for sees_every_project on open paths (above). `policy` is borrowed.
AsyncHandlerFn RequireAuth(const AuthPolicy& policy, AsyncHandlerFn inner);

}  // namespace tpuemu::api
