#include "api/static_files.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "api/google_error.h"

namespace tpuemu::api {
namespace {

namespace fs = std::filesystem;

HttpResponse NotFound(std::string_view path) {
  return ErrorResponse(Status::NotFound("The requested URL " + std::string(path) +
                                        " was not found on this server."));
}

// True when `inner` is `outer` or lies below it; both must be canonical.
bool IsWithin(const fs::path& outer, const fs::path& inner) {
  auto [outer_end, inner_it] =
      std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  (void)inner_it;
  return outer_end == outer.end();
}

// Relative file path for the raw URL remainder, or nullopt when any segment could climb out
// of the root or name something odd.
std::optional<fs::path> SafeRelative(std::string_view raw) {
  fs::path relative;
  bool trailing_slash = raw.empty() || raw.back() == '/';
  while (!raw.empty()) {
    std::size_t slash = raw.find('/');
    std::string_view raw_segment = raw.substr(0, slash);
    raw = slash == std::string_view::npos ? std::string_view() : raw.substr(slash + 1);
    std::string segment = PercentDecode(raw_segment, /*plus_is_space=*/false);
    if (segment.empty()) {
      if (slash == std::string_view::npos || !raw.empty()) return std::nullopt;  // "a//b"
      break;                                                                     // "a/"
    }
    if (segment == "." || segment == ".." ||
        segment.find_first_of(std::string_view("/\\\0:", 4)) != std::string::npos) {
      return std::nullopt;
    }
    relative /= segment;
  }
  if (trailing_slash) relative /= "index.html";
  return relative;
}

}  // namespace

StaticFiles::StaticFiles(fs::path root) { mounts_.push_back({"/", std::move(root)}); }

void StaticFiles::Mount(std::string url_prefix, fs::path dir) {
  if (url_prefix.empty() || url_prefix.front() != '/') url_prefix.insert(0, "/");
  if (url_prefix.back() != '/') url_prefix.push_back('/');
  mounts_.push_back({std::move(url_prefix), std::move(dir)});
  std::stable_sort(mounts_.begin(), mounts_.end(), [](const MountPoint& a, const MountPoint& b) {
    return a.url_prefix.size() > b.url_prefix.size();
  });
}

std::string_view StaticFiles::ContentTypeFor(const fs::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".html" || ext == ".htm") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

HttpResponse StaticFiles::Serve(const HttpRequest& request) const {
  std::string_view raw_path = request.path;
  if (!request.target.empty()) {
    raw_path = request.target;
    raw_path = raw_path.substr(0, raw_path.find('?'));
  }
  if (request.method != "GET") {
    HttpResponse response = ErrorResponse(
        405, Status::Unimplemented("Method " + request.method + " is not allowed on static files"));
    response.headers.emplace_back("Allow", "GET");
    return response;
  }
  if (raw_path.empty() || raw_path.front() != '/') return NotFound(raw_path);

  const MountPoint* mount = nullptr;
  for (const MountPoint& candidate : mounts_) {
    if (raw_path.starts_with(candidate.url_prefix) ||
        raw_path ==
            std::string_view(candidate.url_prefix).substr(0, candidate.url_prefix.size() - 1)) {
      mount = &candidate;
      break;
    }
  }
  if (mount == nullptr) return NotFound(raw_path);
  std::string_view rest =
      raw_path.size() >= mount->url_prefix.size() ? raw_path.substr(mount->url_prefix.size()) : "";
  std::optional<fs::path> relative = SafeRelative(rest);
  if (!relative) return NotFound(raw_path);

  std::error_code ec;
  fs::path root = fs::weakly_canonical(mount->root, ec);
  if (ec) return NotFound(raw_path);
  fs::path file = fs::weakly_canonical(root / *relative, ec);
  // weakly_canonical resolves symlinks, so a link pointing outside the root fails here.
  if (ec || !IsWithin(root, file) || !fs::is_regular_file(file, ec)) return NotFound(raw_path);

  std::ifstream in(file, std::ios::binary);
  if (!in) return NotFound(raw_path);
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    return ErrorResponse(Status::Internal("Could not read " + std::string(raw_path)));
  }
  HttpResponse response;
  response.status = 200;
  response.content_type = std::string(ContentTypeFor(file));
  response.body = std::move(content).str();
  response.headers.emplace_back("Cache-Control", "no-cache");
  return response;
}

}  // namespace tpuemu::api
