// RequestIdRepository: the `request_ids` table (schema v4) — which Operation answered a create or
// delete that carried a requestId, so a retry of the same request gets the same Operation
// (AIP-155). Holds only the Store reference (not owned). Errors: kNotFound, kAlreadyExists, and
// whatever the Store reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct RequestIdRow {
  std::string scope;  // "projects/p/locations/z"
  std::string request_id;
  std::string verb;       // "create", "delete"
  std::string target;     // the resource the request named
  std::string operation;  // the Operation that answered it
  int64_t time_unix_ms = 0;
  friend bool operator==(const RequestIdRow&, const RequestIdRow&) = default;
};

class RequestIdRepository {
 public:
  // Stateless: every call runs in the caller's transaction.
  RequestIdRepository() = default;

  Status Insert(Txn& txn, const RequestIdRow& row) const;
  Result<RequestIdRow> Get(Txn& txn, std::string_view scope, std::string_view request_id) const;
};

}  // namespace tpuemu::db
