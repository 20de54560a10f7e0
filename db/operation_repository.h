// OperationRepository: typed access to the `operations` table (google.longrunning.Operation).
//
// Same conventions as NodeRepository: writes take a Txn& (so a node and its operation change in
// one transaction), reads come in a Txn& form and a convenience form running its own Store::Read.
// Holds only a reference to the Store (not owned; must outlive it). Errors: kNotFound for a missing
// row, kAlreadyExists for a duplicate name, and whatever the Store reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct OperationRow {
  std::string name;  // "projects/p/locations/z/operations/operation-..."
  std::string project;
  std::string zone;
  std::string target;  // full name of the resource acted on
  std::string verb;    // "create", "delete", "start", "stop", ...
  std::string create_time;
  std::optional<std::string> end_time;  // set when done
  bool done = false;
  bool cancel_requested = false;
  std::optional<int32_t> error_code;  // google.rpc.Code, when done with an error
  std::optional<std::string> error_message;
  std::optional<std::string> response_json;  // opaque to db/; when done with success
  int64_t seq = 0;  // assigned by Insert (the input's value is ignored); never changed by Update

  friend bool operator==(const OperationRow&, const OperationRow&) = default;
};

class OperationRepository {
 public:
  static constexpr std::string_view kAllZones = "-";

  explicit OperationRepository(Store& store) : store_(store) {}

  // Inserts `row` with a fresh seq and returns that seq. kAlreadyExists if the name is taken.
  Result<int64_t> Insert(Txn& txn, const OperationRow& row) const;
  // Replaces every column but name and seq of the row named row.name. kNotFound if absent.
  Status Update(Txn& txn, const OperationRow& row) const;
  // kNotFound if absent.
  Status Delete(Txn& txn, std::string_view name) const;

  Result<OperationRow> Get(Txn& txn, std::string_view name) const;
  Result<OperationRow> Get(std::string_view name) const;

  // Up to `limit` rows (no limit when limit <= 0) of `project` in `zone` (kAllZones for all) with
  // seq > after_seq, ordered by seq.
  Result<std::vector<OperationRow>> List(Txn& txn, std::string_view project, std::string_view zone,
                                         int64_t after_seq, int limit) const;
  Result<std::vector<OperationRow>> List(std::string_view project, std::string_view zone,
                                         int64_t after_seq, int limit) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
