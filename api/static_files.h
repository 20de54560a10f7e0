// Serves the dashboard's static files from a directory, for the router's GET fallback.
//
// "/" (and any path ending in '/') -> index.html. Never escapes its root: a path with a ".." or
// "." segment (also percent-encoded, "%2e%2e"), an encoded slash or backslash ("%2f", "%5c"), a
// NUL, a doubled slash, or a symlink whose canonical target leaves the root answers 404 in
// Google's envelope, exactly like a missing file, so nothing about the tree is revealed.
// Responses carry `Cache-Control: no-cache` (the dashboard changes with the binary).
//
// Threading: configure (constructor, Mount) before serving; Serve is then safe to call
// concurrently. Files are read whole per request: they are small.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "api/http_types.h"

namespace tpuemu::api {

class StaticFiles {
 public:
  explicit StaticFiles(std::filesystem::path root);

  // Serves URL paths under `url_prefix` (e.g. "/vendor/chart.js/") from `dir` instead of the
  // root. The longest matching prefix wins. A missing dir just makes its files 404.
  void Mount(std::string url_prefix, std::filesystem::path dir);

  // GET only (other methods: 405 with `Allow: GET`).
  HttpResponse Serve(const HttpRequest& request) const;

  // "text/html; charset=utf-8" for ".html", ...; "application/octet-stream" when unknown.
  static std::string_view ContentTypeFor(const std::filesystem::path& file);

 private:
  struct MountPoint {
    std::string url_prefix;      // starts and ends with '/'
    std::filesystem::path root;  // as given
  };
  std::vector<MountPoint> mounts_;  // sorted longest prefix first; "/" -> root is last
};

}  // namespace tpuemu::api
