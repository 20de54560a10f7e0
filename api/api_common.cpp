#include "api/api_common.h"

#include <charconv>

#include "api/google_error.h"

namespace tpuemu::api {

bool WantsIntEnums(const HttpRequest& req) {
  for (const char* key : {"$alt", "alt"}) {
    auto range = req.query.equal_range(key);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second.find("enum-encoding=int") != std::string::npos) return true;
    }
  }
  return false;
}

Result<service::PageRequest> ParsePage(const HttpRequest& req) {
  service::PageRequest page;
  if (std::optional<std::string> size = req.Query("pageSize"); size && !size->empty()) {
    int value = 0;
    auto [end, ec] = std::from_chars(size->data(), size->data() + size->size(), value);
    if (ec != std::errc() || end != size->data() + size->size()) {
      return Status::InvalidArgument("Invalid value at 'page_size' (TYPE_INT32), \"" + *size +
                                     "\"");
    }
    if (value < 0) {
      return Status::InvalidArgument(
          "Invalid value for field 'pageSize': must not be negative, got " + *size);
    }
    page.page_size = value;
  }
  if (std::optional<std::string> token = req.Query("pageToken")) page.page_token = *token;
  return page;
}

HttpResponse Reply(const Result<nlohmann::json>& result) {
  if (!result.ok()) return ErrorResponse(result.status());
  return JsonResponse(200, *result);
}

HttpResponse ReplyStatus(const Status& status) {
  if (!status.ok()) return ErrorResponse(status);
  return JsonResponse(200, nlohmann::json::object());
}

std::string ParentName(const PathParams& params) {
  return "projects/" + params.at("project") + "/locations/" + params.at("location");
}

}  // namespace tpuemu::api
