// Page requests and page tokens (AIP-158), shared by every list the service and api/ serve.
//
// A page token is opaque to clients; inside it is one letter saying what the number after it is
// ('s': the seq of the last row served; 'o': an offset into a list built in memory) and that
// number in decimal, e.g. "s42". A token is only accepted by a list that issues tokens of its
// letter. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace tpuemu::service {

// Parsed page request: page_size 0 = the list's default; api/ has already refused a negative one.
struct PageRequest {
  int page_size = 0;
  std::string page_token;
};

inline constexpr int kDefaultPageSize = 100;   // an absent or 0 pageSize
inline constexpr int kMaxPageSize = 1000;      // a larger pageSize is coerced down (AIP-158)
inline constexpr char kSeqPageToken = 's';     // position = seq of the last row served
inline constexpr char kOffsetPageToken = 'o';  // position = index of the next item

// "s42" for (kSeqPageToken, 42).
std::string EncodePageToken(char kind, int64_t position);
// 0 for an empty token (the first page). INVALID_ARGUMENT "Invalid value for field 'pageToken':
// '<token>'" for a token EncodePageToken(kind, …) cannot have made: another letter, a number that
// is not plain decimal, a negative one.
Result<int64_t> DecodePageToken(char kind, const std::string& token);
// The INVALID_ARGUMENT DecodePageToken returns, for a list that finds a decoded token out of
// range.
Status InvalidPageToken(const std::string& token);
// The rows one page holds: `default_size` when page_size is 0 (or negative), else page_size
// coerced to at most kMaxPageSize.
int PageSize(const PageRequest& page, int default_size);

}  // namespace tpuemu::service
