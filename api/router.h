// Request router, drogon-style: exact paths in a hash map, path templates in a vector.
//
// Patterns are Google path templates with `{var}` segments and an optional custom verb on the last
// segment: "/v2/projects/{project}/locations/{location}/nodes/{node}:start". A `{var}` matches one
// non-empty segment; a pattern without a verb never matches a path whose last segment carries one
// (".../nodes/n1:start" is not ".../nodes/{node}"). Variables are percent-decoded per segment, so
// "%2F" inside a segment cannot forge an extra segment.
//
// Dispatch answers 404 (no route matches the path) and 405 (the path matches, not for this method;
// with an `Allow` header) in Google's envelope, and a handler that throws with 500 INTERNAL. The
// response's `route` is the matched PATTERN, the label for logs and metrics.
//
// Threading: register every route (Add*, SetFallback) before serving; after that the router is
// immutable and Dispatch/Handle may run concurrently from any number of threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/http_types.h"

namespace tpuemu::api {

struct RouteInfo {
  std::string method;
  std::string pattern;
};

class Router {
 public:
  Router();
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Registers a handler. Registering the same method + pattern twice replaces the first.
  // A malformed pattern (not starting with '/', unbalanced braces, empty var name) is a
  // programming error: it is logged and the route is not added.
  void Add(std::string_view method, std::string_view pattern, Handler handler);
  void AddAsync(std::string_view method, std::string_view pattern, AsyncHandler handler);

  // Called for GET requests whose path matches no route (static files). Its responses are
  // labelled `route_label` ("static" by default) so metrics do not explode on raw paths.
  void SetFallback(AsyncHandler handler, std::string route_label = "static");
  void SetFallback(Handler handler, std::string route_label = "static");

  // Routes the request and completes `respond` exactly once (possibly later, from another
  // thread, for async routes).
  void Dispatch(const HttpRequest& request, Responder respond) const;

  // Synchronous form for tests and tools: waits for the responder (async routes included).
  HttpResponse Handle(const HttpRequest& request) const;

  // What HttpServer calls: Dispatch bound to this router (which must outlive the server).
  AsyncHandlerFn AsHandler() const;

  // Registered (method, pattern) pairs in registration order, for introspection.
  std::vector<RouteInfo> Routes() const;

 private:
  struct Route;
  void AddRoute(std::string_view method, std::string_view pattern, AsyncHandler handler);
  const Route* Find(const HttpRequest& request, PathParams* params) const;

  std::vector<std::unique_ptr<Route>> routes_;     // owns every route
  std::unordered_map<std::string, Route*> exact_;  // literal paths -> route
  std::vector<Route*> patterns_;                   // templated routes, in order
  std::vector<RouteInfo> infos_;
  AsyncHandler fallback_;
  std::string fallback_label_;
};

}  // namespace tpuemu::api
