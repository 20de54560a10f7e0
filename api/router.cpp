#include "api/router.h"

#include <atomic>
#include <exception>
#include <future>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "api/google_error.h"

namespace tpuemu::api {

struct Router::Route {
  struct Segment {
    std::string text;  // literal text, or the variable name when is_var
    bool is_var = false;
  };
  std::string pattern;
  std::vector<Segment> segments;  // path segments after the leading '/', verb stripped
  std::string verb;               // custom verb without ':', "" when none
  std::map<std::string, AsyncHandler> handlers;  // method -> handler
};

namespace {

// A path split into decoded segments plus the custom verb carried by its last segment.
struct SplitPath {
  std::vector<std::string> segments;
  std::string verb;
  bool ok = false;
};

// Splits a RAW (still percent-encoded) path so that an encoded '/' or ':' stays inside its
// segment and cannot forge structure, then decodes each segment.
SplitPath Split(std::string_view raw_path, bool decode) {
  SplitPath out;
  if (raw_path.empty() || raw_path.front() != '/') return out;
  raw_path.remove_prefix(1);
  std::vector<std::string_view> raw;
  while (true) {
    std::size_t slash = raw_path.find('/');
    raw.push_back(raw_path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    raw_path.remove_prefix(slash + 1);
  }
  std::string_view& last = raw.back();
  std::size_t colon = last.find(':');
  if (colon != std::string_view::npos) {
    out.verb =
        decode ? PercentDecode(last.substr(colon + 1), false) : std::string(last.substr(colon + 1));
    last = last.substr(0, colon);
  }
  for (std::string_view segment : raw) {
    out.segments.push_back(decode ? PercentDecode(segment, false) : std::string(segment));
  }
  out.ok = true;
  return out;
}

std::string_view RawPath(const HttpRequest& request) {
  if (request.target.empty()) return request.path;
  std::string_view target = request.target;
  return target.substr(0, target.find('?'));
}

AsyncHandler FromSync(Handler handler) {
  return [handler = std::move(handler)](const HttpRequest& request, const PathParams& params,
                                        Responder respond) { respond(handler(request, params)); };
}

// Runs `handler` so that `respond` fires exactly once, labelled with `route`, even if the
// handler throws or responds twice.
void Invoke(const AsyncHandler& handler, const std::string& route, const HttpRequest& request,
            const PathParams& params, Responder respond) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  Responder once = [done, route, respond = std::move(respond),
                    what = request.method + " " + request.path](HttpResponse response) {
    if (done->exchange(true)) {
      spdlog::error("handler for {} ({}) responded twice; second response dropped", what, route);
      return;
    }
    response.route = route;
    respond(std::move(response));
  };
  std::string error;
  try {
    handler(request, params, once);
    return;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown exception";
  }
  spdlog::error("handler for {} {} ({}) threw: {}", request.method, request.path, route, error);
  if (!done->load()) {
    once(ErrorResponse(
        Status::Internal("Internal error while handling " + request.method + " " + request.path)));
  }
}

}  // namespace

Router::Router() = default;
Router::~Router() = default;

void Router::Add(std::string_view method, std::string_view pattern, Handler handler) {
  AddRoute(method, pattern, FromSync(std::move(handler)));
}

void Router::AddAsync(std::string_view method, std::string_view pattern, AsyncHandler handler) {
  AddRoute(method, pattern, std::move(handler));
}

void Router::SetFallback(AsyncHandler handler, std::string route_label) {
  fallback_ = std::move(handler);
  fallback_label_ = std::move(route_label);
}

void Router::SetFallback(Handler handler, std::string route_label) {
  SetFallback(FromSync(std::move(handler)), std::move(route_label));
}

void Router::AddRoute(std::string_view method, std::string_view pattern, AsyncHandler handler) {
  auto route = std::make_unique<Route>();
  route->pattern = std::string(pattern);
  SplitPath split = Split(pattern, /*decode=*/false);
  bool ok = split.ok;
  bool templated = false;
  for (std::string& text : split.segments) {
    Route::Segment segment;
    if (!text.empty() && text.front() == '{') {
      if (text.size() < 3 || text.back() != '}' ||
          text.find_first_of("{}=*", 1) != text.size() - 1) {
        ok = false;
      }
      segment.is_var = true;
      segment.text = text.size() >= 2 ? text.substr(1, text.size() - 2) : "";
      templated = true;
    } else {
      if (text.find_first_of("{}") != std::string::npos) ok = false;
      segment.text = text;
    }
    route->segments.push_back(std::move(segment));
  }
  route->verb = split.verb;
  if (route->verb.find_first_of("{}") != std::string::npos) ok = false;
  if (!ok) {
    spdlog::error("router: malformed route pattern '{}' ignored", pattern);
    return;
  }
  // Same pattern registered before: add the method to that route (or replace its handler).
  for (auto& existing : routes_) {
    if (existing->pattern == pattern) {
      if (!existing->handlers.contains(std::string(method))) {
        infos_.push_back({std::string(method), std::string(pattern)});
      }
      existing->handlers[std::string(method)] = std::move(handler);
      return;
    }
  }
  infos_.push_back({std::string(method), std::string(pattern)});
  route->handlers[std::string(method)] = std::move(handler);
  Route* raw = route.get();
  routes_.push_back(std::move(route));
  if (templated) {
    patterns_.push_back(raw);
  } else {
    exact_[raw->pattern] = raw;
  }
}

void Router::Dispatch(const HttpRequest& request, Responder respond) const {
  // Exact paths first (O(1)), then templates in registration order. The first route that
  // matches the path AND has the method wins; routes matching only the path feed `allowed`.
  std::set<std::string> allowed;
  auto try_route = [&](const Route& route, const PathParams& params) {
    auto it = route.handlers.find(request.method);
    if (it == route.handlers.end()) {
      for (const auto& [method, unused] : route.handlers) allowed.insert(method);
      return false;
    }
    Invoke(it->second, route.pattern, request, params, std::move(respond));
    return true;
  };

  if (auto it = exact_.find(request.path); it != exact_.end()) {
    if (try_route(*it->second, PathParams())) return;
  }
  SplitPath path = Split(RawPath(request), /*decode=*/true);
  if (path.ok) {
    for (const Route* route : patterns_) {
      if (route->segments.size() != path.segments.size() || route->verb != path.verb) continue;
      PathParams params;
      bool match = true;
      for (std::size_t i = 0; i < path.segments.size() && match; ++i) {
        const Route::Segment& segment = route->segments[i];
        const std::string& value = path.segments[i];
        if (segment.is_var) {
          match = !value.empty();
          if (match) params.emplace(segment.text, value);
        } else {
          match = segment.text == value;
        }
      }
      if (match && try_route(*route, params)) return;
    }
  }

  if (!allowed.empty()) {
    std::string allow;
    for (const std::string& method : allowed) allow += (allow.empty() ? "" : ", ") + method;
    HttpResponse response = ErrorResponse(
        405, Status::Unimplemented("Method " + request.method + " is not allowed on " +
                                   request.path + " (allowed: " + allow + ")"));
    response.headers.emplace_back("Allow", allow);
    respond(std::move(response));
    return;
  }
  if (request.method == "GET" && fallback_) {
    Invoke(fallback_, fallback_label_, request, PathParams(), std::move(respond));
    return;
  }
  respond(ErrorResponse(
      Status::NotFound("The requested URL " + request.path + " was not found on this server.")));
}

HttpResponse Router::Handle(const HttpRequest& request) const {
  auto promise = std::make_shared<std::promise<HttpResponse>>();
  std::future<HttpResponse> future = promise->get_future();
  Dispatch(request, [promise](HttpResponse response) { promise->set_value(std::move(response)); });
  promise.reset();  // so a handler that drops its responder breaks the promise
  try {
    return future.get();
  } catch (const std::future_error&) {
    return ErrorResponse(Status::Internal("The handler for " + request.method + " " + request.path +
                                          " dropped its response"));
  }
}

AsyncHandlerFn Router::AsHandler() const {
  return [this](const HttpRequest& request, Responder respond) {
    Dispatch(request, std::move(respond));
  };
}

std::vector<RouteInfo> Router::Routes() const { return infos_; }

}  // namespace tpuemu::api
