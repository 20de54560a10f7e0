// ChaosRules: API calls that fail on purpose, like LocalStack's chaos API or gopherstack's
// /chaos/faults — so a client's retry and error handling can be tested without waiting for the
// real service to misbehave.
//
// A rule matches an HTTP method ("*" = any) and a regular expression searched in the request
// path (ECMAScript; "/nodes$" matches node creates and lists), fires with a probability drawn from
// the seeded "chaos" stream (reproducible runs), at most maxHits times (0 = no limit), and either
//   - fails the call itself: `error` {code, message} (e.g. 503 UNAVAILABLE, 429
//     RESOURCE_EXHAUSTED), answered in Google's error envelope, or
//   - accepts a create and fails its Operation: `operationError` {code, message} (e.g. code 8
//     with the stockout message), for nodes.create and queuedResources.create.
// `code` is a canonical name ("UNAVAILABLE"), a gRPC number (0-16) or an HTTP status (100-599).
// Rules are stored (they survive a restart) and listed/deleted by id. Rules are tried in creation
// order; the first that matches and fires wins.
//
// Threads: every member is guarded by mu_; the store is borrowed and must outlive the rules.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/fault_settings_repository.h"
#include "db/store.h"
#include "service/faults/seeded_rng.h"

namespace tpuemu::service {

struct ChaosEffect {
  std::string rule_id;
  bool operation_error = false;  // false: fail the call itself
  Status status;                 // never OK
};

class ChaosRules {
 public:
  ChaosRules(db::Store& store, uint64_t seed);
  ~ChaosRules();

  // Reads the stored rules (startup).
  Status Load();
  // Adds a rule from its JSON (see the header comment); the rule as rendered, with its id
  // (generated "rule-N" when absent). INVALID_ARGUMENT naming the field; ALREADY_EXISTS.
  Result<nlohmann::json> Add(const nlohmann::json& body);
  // NOT_FOUND "Resource 'chaosRules/<id>' was not found" for an unknown id.
  Status Delete(const std::string& id);
  // {"rules": [...]} in creation order, each with its `hits` so far.
  nlohmann::json List() const;
  // The effect of the first rule that matches and fires, if any (counts the hit).
  std::optional<ChaosEffect> Match(std::string_view method, std::string_view path);
  // Forgets every rule (the store was wiped by POST /_emulator/reset).
  void Clear();

 private:
  struct Rule;
  Result<std::unique_ptr<Rule>> Parse(const nlohmann::json& body) const;

  db::Store& store_;
  db::FaultSettingsRepository settings_;
  SeededRng rng_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Rule>> rules_;  // guarded by mu_
  int64_t next_id_ = 1;                       // guarded by mu_
};

}  // namespace tpuemu::service
