// A small AIP-160 filter and AIP-132 orderBy for the catalog list methods (acceleratorTypes,
// runtimeVersions, locations): comparisons on JSON fields joined by AND / OR, NOT, and '*'
// wildcards in string equality. e.g. `type = "v5litepod-*" AND NOT type = "v5litepod-1"`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::api {

class ListFilter {
 public:
  // INVALID_ARGUMENT naming the filter and the position of the problem. "" matches everything.
  static Result<ListFilter> Parse(const std::string& filter);
  bool Matches(const nlohmann::json& item) const;

  struct Node;  // the parsed expression

 private:
  std::shared_ptr<const Node> root_;  // null: match all
};

// Sorts `items` by "field [asc|desc][, field …]"; INVALID_ARGUMENT for a malformed clause.
Status SortByOrder(const std::string& order_by, std::vector<nlohmann::json>& items);

}  // namespace tpuemu::api
