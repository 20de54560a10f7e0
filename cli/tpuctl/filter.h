// --filter for tpuctl: the subset of gcloud's filter language (`gcloud topic filters`) that list
// commands need, applied client-side to each resource of a list.
//
//   key=value    equal (case-insensitive); for a resource path such as `name` the last segment
//                may be given (`name=my-tpu`); `value*` matches a prefix; lists: any element
//   key!=value   not equal
//   key:value    has: case-insensitive substring (lists: any element; maps: `labels:env` = has
//                that key); `key:*` = the key is present and non-empty
//   key~regex    ECMAScript regex search
//   a AND b, a b (implicit AND), a OR b (AND binds tighter), NOT a, -a, ( ... )
// Keys are field paths as in --format (`labels.env`, `acceleratorConfig.type`); a missing key
// matches nothing but `!=`. Values may be quoted with '...' or "...". Filter::Parse returns
// INVALID_ARGUMENT naming the position on bad syntax. A parsed Filter is immutable (thread-safe).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::cli {

class Filter {
 public:
  struct Node;
  static Result<Filter> Parse(const std::string& text);  // "" matches everything
  bool Matches(const nlohmann::json& item) const;

 private:
  std::shared_ptr<const Node> root_;
};

}  // namespace tpuemu::cli
