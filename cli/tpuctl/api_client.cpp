#include "cli/tpuctl/api_client.h"

#include <array>
#include <cstdio>

namespace tpuemu::cli {
namespace {

constexpr std::string_view kUnreachablePrefix = "cannot reach tpuemud at ";

}  // namespace

StatusCode StatusCodeFromName(std::string_view name) {
  for (int code = 0; code <= static_cast<int>(StatusCode::kUnauthenticated); ++code) {
    if (StatusCodeName(static_cast<StatusCode>(code)) == name) return static_cast<StatusCode>(code);
  }
  return StatusCode::kUnknown;
}

Status StatusFromReply(int http_status, const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const nlohmann::json& e = j["error"];
    std::string message = e.value("message", std::string());
    std::string name = e.contains("status") && e["status"].is_string()
                           ? e["status"].get<std::string>()
                           : std::string("UNKNOWN");
    StatusCode code = StatusCodeFromName(name);
    if (code == StatusCode::kOk) code = StatusCode::kUnknown;
    return Status(code, message.empty() ? "HTTP " + std::to_string(http_status) : message);
  }
  std::string excerpt = body.substr(0, 200);
  return Status(StatusCode::kUnknown,
                "HTTP " + std::to_string(http_status) + (excerpt.empty() ? "" : ": " + excerpt));
}

Result<nlohmann::json> ApiClient::Call(const std::string& method, const std::string& path,
                                       const nlohmann::json& body,
                                       std::chrono::milliseconds timeout) {
  Result<HttpReply> reply = http_.Request(method, path, body.is_null() ? "" : body.dump(), timeout);
  if (!reply.ok()) {
    return Status(reply.status().code() == StatusCode::kDeadlineExceeded
                      ? StatusCode::kDeadlineExceeded
                      : StatusCode::kUnavailable,
                  std::string(kUnreachablePrefix) + http_.endpoint().url + ": " +
                      reply.status().message() + " (set --endpoint or TPUEMU_ENDPOINT)");
  }
  if (reply->status < 200 || reply->status >= 300)
    return StatusFromReply(reply->status, reply->body);
  if (reply->body.empty()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Internal("the reply to " + method + " " + path + " is not JSON");
  }
  return j;
}

bool ApiClient::IsUnreachable(const Status& status) const {
  return status.message().rfind(kUnreachablePrefix, 0) == 0;
}

std::string UrlEncode(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      std::array<char, 4> hex;
      std::snprintf(hex.data(), hex.size(), "%%%02X", c);
      out += hex.data();
    }
  }
  return out;
}

}  // namespace tpuemu::cli
