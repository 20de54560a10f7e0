// Bearer-token auth (tpuemud --auth-tokens FILE), off unless a token file is given.
//
// Token file (JSON):
//   {"tokens": [{"token": "t1", "projects": ["p1", "p2"], "role": "editor",
//                "user": "alice@example.com"},
//               {"token": "ro", "projects": ["*"], "role": "viewer"}]}
// `projects` lists project ids; "*" grants every project. `role` is "viewer" (GET/HEAD only) or
// "editor" (every method). Tokens must be unique, 1..4096 printable non-space characters. `user`
// (optional) is the person signed in with it: the dashboard's terminal logs them into a worker as
// a user of that name (service/workers/console_terminal.h, ConsoleUserName).
// A WebSocket (the terminal) may carry its token as a Sec-WebSocket-Protocol item
// "bearer.<base64url of the token>", since a browser cannot set its headers; opening one is a
// write (an editor's).
//
// Which requests need a token (every route that reads or changes anyone's resources):
//   - the TPU API and its siblings: first segment an API version ("v1", "v2", "v2alpha1", ...);
//     the project is segment 2: /v2/projects/{p}/...
//   - the emulator's own control plane: first segment starting with '_' ("/_emulator/reset")
//   - Compute Engine's slice (api/routes_compute.cpp, gcloud's `tpu-vm ssh` and `project-info
//     add-metadata`): first segment "compute"; the project is segment 3:
//     /compute/{v1,beta,alpha}/projects/{p}/... (its ssh-keys open every node of the project)
// The first segment is compared after percent-decoding and case-insensitively, as the router
// decodes it, so an encoded or upper-case spelling ("/%76%32", "/Compute") cannot slip past.
// Everything else stays open: /healthz and /readyz (liveness, no data), /metrics (below), the
// discovery document (/$discovery/rest, /discovery/v1/apis/tpu/{version}/rest: the schema of the
// emulated API, no project's data; Google serves it without credentials too) and the dashboard's
// static files. tests/e2e/auth_routes_test.cpp walks every route the router registers and fails
// on one that is neither protected nor on that allow-list. An open request whose token is not
// granted every project ("*") — none at all, for instance — reaches the handler with
// HttpRequest::sees_every_project = false: GET /metrics then shows only its aggregate,
// project-free series (a project's per-node series are at GET /v2/projects/{p}/metrics, behind
// the rules below).
// Rules, in order:
//   no or malformed `Authorization: Bearer <token>` -> 401 UNAUTHENTICATED (+ WWW-Authenticate)
//   unknown token                                    -> 401 UNAUTHENTICATED (+ WWW-Authenticate)
//   a path naming project p, p not granted           -> 403 PERMISSION_DENIED
//     (`locations/-` lists stay inside p, so they need p only; project "-" needs "*")
//   a path without a project (/_emulator/reset, ...) -> needs a "*" token, else 403; except that
//     any valid token may read GET /_emulator/hardware and GET /_emulator/compare (catalog data
//     of no project)
//   a viewer's write (any method but GET/HEAD)       -> 403 PERMISSION_DENIED
//     (Compute's POST .../operations/{op}/wait included)
// Errors use Google's envelope; the 403 message names a permission: `tpu.<collection>.<verb>`,
// or Compute's own names under /compute (`compute.projects.get`,
// `compute.projects.setCommonInstanceMetadata`, `compute.globalOperations.get`).
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
  std::string user;  // the person signed in with the token; "" when not given
};

class AuthPolicy {
 public:
  // INVALID_ARGUMENT naming the entry and field on a malformed document; NOT_FOUND for a file
  // that cannot be read.
  static Result<AuthPolicy> Parse(std::string_view json_text);
  static Result<AuthPolicy> Load(const std::filesystem::path& file);

  // True when `request` is an API request (see above: TPU, emulator or Compute) and so needs a
  // token.
  static bool IsProtected(const HttpRequest& request);
  // OK, or UNAUTHENTICATED / PERMISSION_DENIED with Google's wording. Open paths are always OK.
  Status Check(const HttpRequest& request) const;
  // The `user` of the request's token; "" when none is given.
  std::string UserOf(const HttpRequest& request) const;
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
