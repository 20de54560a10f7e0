#include "service/common/page_token.h"

#include <algorithm>
#include <charconv>

namespace tpuemu::service {

std::string EncodePageToken(char kind, int64_t position) { return kind + std::to_string(position); }

Result<int64_t> DecodePageToken(char kind, const std::string& token) {
  if (token.empty()) return int64_t{0};
  int64_t position = 0;
  const char* last = token.data() + token.size();
  auto [end, ec] = std::from_chars(token.data() + 1, last, position);
  if (token[0] != kind || ec != std::errc() || end != last || position < 0) {
    return InvalidPageToken(token);
  }
  return position;
}

Status InvalidPageToken(const std::string& token) {
  return Status::InvalidArgument("Invalid value for field 'pageToken': '" + token + "'");
}

int PageSize(const PageRequest& page, int default_size) {
  if (page.page_size <= 0) return default_size;
  return std::min(page.page_size, kMaxPageSize);
}

}  // namespace tpuemu::service
