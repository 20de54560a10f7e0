#include "api/http_types.h"

namespace tpuemu::api {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> HttpRequest::Query(std::string_view key) const {
  auto it = query.find(std::string(key));
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> HttpRequest::Header(std::string_view lower_name) const {
  auto it = headers.find(std::string(lower_name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

HttpResponse JsonResponse(int status, const nlohmann::json& body) {
  // Replace invalid UTF-8 instead of throwing: a handler echoing user bytes must not turn into
  // an exception on the IO path.
  return JsonResponse(status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(body);
  return response;
}

std::string PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      int hi = HexValue(text[i + 1]);
      int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

std::vector<std::string_view> HeaderItems(std::string_view value) {
  std::vector<std::string_view> items;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) items.push_back(item);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
  }
  return items;
}

HttpRequest MakeRequest(std::string method, std::string target, std::string body) {
  HttpRequest request;
  request.method = std::move(method);
  request.body = std::move(body);
  std::string_view view = target;
  std::size_t question = view.find('?');
  request.path = PercentDecode(view.substr(0, question), /*plus_is_space=*/false);
  if (question != std::string_view::npos) {
    std::string_view query = view.substr(question + 1);
    while (!query.empty()) {
      std::size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
      if (pair.empty()) continue;
      std::size_t eq = pair.find('=');
      std::string key = PercentDecode(pair.substr(0, eq), true);
      std::string value =
          eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), true);
      request.query.emplace(std::move(key), std::move(value));
    }
  }
  request.target = std::move(target);
  return request;
}

}  // namespace tpuemu::api
