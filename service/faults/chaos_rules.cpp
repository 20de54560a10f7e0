#include "service/faults/chaos_rules.h"

#include <array>
#include <regex>

#include "service/common/clock.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxPatternBytes = 512;

// HTTP statuses a rule may name, to the canonical code Google clients read back from them.
constexpr std::array<std::pair<int, StatusCode>, 12> kHttpCodes = {{
    {400, StatusCode::kInvalidArgument},
    {401, StatusCode::kUnauthenticated},
    {403, StatusCode::kPermissionDenied},
    {404, StatusCode::kNotFound},
    {409, StatusCode::kAborted},
    {429, StatusCode::kResourceExhausted},
    {499, StatusCode::kCancelled},
    {500, StatusCode::kInternal},
    {501, StatusCode::kUnimplemented},
    {502, StatusCode::kUnavailable},
    {503, StatusCode::kUnavailable},
    {504, StatusCode::kDeadlineExceeded},
}};

Status Invalid(const std::string& field, const std::string& why) {
  return Status::InvalidArgument("Invalid value for field '" + field + "': " + why);
}

Result<StatusCode> ParseCode(const json& code, const std::string& field) {
  if (code.is_string()) {
    for (int c = 1; c <= 16; ++c) {
      if (StatusCodeName(static_cast<StatusCode>(c)) == code.get<std::string>()) {
        return static_cast<StatusCode>(c);
      }
    }
  } else if (code.is_number_integer()) {
    const int64_t n = code.get<int64_t>();
    if (n >= 1 && n <= 16) return static_cast<StatusCode>(n);
    for (const auto& [http, status] : kHttpCodes) {
      if (http == n) return status;
    }
  }
  return Invalid(field,
                 code.dump() +
                     " is not a canonical code name (UNAVAILABLE), a gRPC code 1-16 or one "
                     "of the HTTP statuses 400 401 403 404 409 429 499 500 501 502 503 504.");
}

// "/v2/projects/p/locations/z/nodes" -> "z" (empty when the path names no location).
std::string ZoneOf(std::string_view path) {
  const std::string_view marker = "/locations/";
  std::size_t at = path.find(marker);
  if (at == std::string_view::npos) return "";
  std::string_view rest = path.substr(at + marker.size());
  return std::string(rest.substr(0, rest.find('/')));
}

}  // namespace

struct ChaosRules::Rule {
  std::string id;
  std::string method = "*";
  std::string path = ".*";
  std::regex pattern;
  double probability = 1;
  int64_t max_hits = 0;
  int64_t hits = 0;
  bool operation_error = false;
  StatusCode code = StatusCode::kUnavailable;
  std::string message;
  std::string create_time;

  json Render() const {
    json effect = {{"code", static_cast<int>(code)}, {"status", StatusCodeName(code)}};
    if (!message.empty()) effect["message"] = message;
    return {{"id", id},
            {"method", method},
            {"path", path},
            {"probability", probability},
            {"maxHits", max_hits},
            {"hits", hits},
            {operation_error ? "operationError" : "error", std::move(effect)},
            {"createTime", create_time}};
  }
};

ChaosRules::ChaosRules(db::Store& store, uint64_t seed)
    : store_(store), settings_(store), rng_(seed, "chaos") {}

ChaosRules::~ChaosRules() = default;

Result<std::unique_ptr<ChaosRules::Rule>> ChaosRules::Parse(const json& body) const {
  auto rule = std::make_unique<Rule>();
  if (auto it = body.find("id"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || it->get<std::string>().empty() || it->get<std::string>().size() > 63) {
      return Invalid("id", "a non-empty string of at most 63 characters.");
    }
    rule->id = it->get<std::string>();
  }
  if (auto it = body.find("method"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return Invalid("method", "a string such as \"POST\" or \"*\".");
    rule->method = it->get<std::string>();
    for (char& c : rule->method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (auto it = body.find("path"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || it->get<std::string>().size() > kMaxPatternBytes) {
      return Invalid("path", "a regular expression of at most 512 bytes.");
    }
    rule->path = it->get<std::string>();
  }
  try {
    rule->pattern = std::regex(rule->path, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return Invalid("path", "'" + rule->path + "' is not a regular expression (" + e.what() + ").");
  }
  if (auto it = body.find("probability"); it != body.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1) {
      return Invalid("probability", "a number from 0 to 1.");
    }
    rule->probability = it->get<double>();
  }
  if (auto it = body.find("maxHits"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Invalid("maxHits", "a non-negative integer (0 = no limit).");
    }
    rule->max_hits = it->get<int64_t>();
  }
  const bool has_error = body.contains("error") && body["error"].is_object();
  const bool has_op_error = body.contains("operationError") && body["operationError"].is_object();
  if (has_error == has_op_error) {
    return Status::InvalidArgument(
        "A chaos rule needs exactly one of 'error' (the call fails) and 'operationError' (a "
        "create is accepted and its Operation fails), e.g. {\"error\": {\"code\": 503}}.");
  }
  rule->operation_error = has_op_error;
  const std::string field = has_op_error ? "operationError" : "error";
  const json& effect = body[field];
  if (!effect.contains("code")) return Invalid(field + ".code", "required.");
  Result<StatusCode> code = ParseCode(effect["code"], field + ".code");
  if (!code.ok()) return code.status();
  rule->code = *code;
  if (auto it = effect.find("message"); it != effect.end() && !it->is_null()) {
    if (!it->is_string()) return Invalid(field + ".message", "a string.");
    rule->message = it->get<std::string>();
  }
  rule->create_time = NowRfc3339();
  return rule;
}

Status ChaosRules::Load() {
  Result<std::vector<db::ChaosRuleRow>> rows = settings_.ListChaosRules();
  if (!rows.ok()) return rows.status();
  std::vector<std::unique_ptr<Rule>> rules;
  for (const db::ChaosRuleRow& row : *rows) {
    Result<std::unique_ptr<Rule>> rule =
        Parse(json::parse(row.rule_json, nullptr, /*allow_exceptions=*/false));
    if (!rule.ok())
      return Status::Internal("stored chaos rule " + row.id + ": " + rule.status().message());
    (*rule)->id = row.id;
    (*rule)->create_time = row.create_time;
    rules.push_back(std::move(rule).value());
  }
  std::lock_guard lock(mu_);
  rules_ = std::move(rules);
  next_id_ = static_cast<int64_t>(rules_.size()) + 1;
  return Status::Ok();
}

Result<json> ChaosRules::Add(const json& body) {
  Result<std::unique_ptr<Rule>> parsed = Parse(body);
  if (!parsed.ok()) return parsed.status();
  std::unique_ptr<Rule> rule = std::move(parsed).value();
  std::lock_guard lock(mu_);
  if (rule->id.empty()) {
    for (;;) {
      rule->id = "rule-" + std::to_string(next_id_++);
      bool taken = false;
      for (const auto& r : rules_) taken = taken || r->id == rule->id;
      if (!taken) break;
    }
  }
  json stored = body;
  stored["id"] = rule->id;
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    Result<int64_t> seq =
        settings_.InsertChaosRule(txn, {rule->id, stored.dump(), rule->create_time, 0});
    return seq.ok() ? Status::Ok() : seq.status();
  });
  if (!s.ok()) return s;
  json out = rule->Render();
  rules_.push_back(std::move(rule));
  return out;
}

Status ChaosRules::Delete(const std::string& id) {
  std::lock_guard lock(mu_);
  Status s = store_.Transaction([&](db::Txn& txn) { return settings_.DeleteChaosRule(txn, id); });
  if (s.code() == StatusCode::kNotFound) {
    return Status::NotFound("Resource 'chaosRules/" + id + "' was not found");
  }
  if (!s.ok()) return s;
  std::erase_if(rules_, [&](const std::unique_ptr<Rule>& r) { return r->id == id; });
  return Status::Ok();
}

json ChaosRules::List() const {
  std::lock_guard lock(mu_);
  json rules = json::array();
  for (const auto& r : rules_) rules.push_back(r->Render());
  return {{"rules", std::move(rules)}};
}

std::optional<ChaosEffect> ChaosRules::Match(std::string_view method, std::string_view path) {
  std::lock_guard lock(mu_);
  for (const auto& r : rules_) {
    if (r->max_hits > 0 && r->hits >= r->max_hits) continue;
    if (r->method != "*" && r->method != method) continue;
    if (!std::regex_search(path.begin(), path.end(), r->pattern)) continue;
    if (!rng_.Bernoulli(r->probability)) continue;
    ++r->hits;
    std::string message = r->message;
    if (message.empty() && r->operation_error && r->code == StatusCode::kResourceExhausted) {
      // The real stockout text, so clients that look for it recognise it.
      message = "There is no more capacity in the zone \"" + ZoneOf(path) +
                "\"; you can try in another zone where Cloud TPU Nodes are offered (see "
                "https://cloud.google.com/tpu/docs/regions) [EID: 0xc4a05]";
    }
    if (message.empty()) {
      message =
          std::string(StatusCodeName(r->code)) + " injected by tpuemu chaos rule '" + r->id + "'.";
    }
    return ChaosEffect{r->id, r->operation_error, Status(r->code, message)};
  }
  return std::nullopt;
}

void ChaosRules::Clear() {
  std::lock_guard lock(mu_);
  rules_.clear();
  next_id_ = 1;
}

}  // namespace tpuemu::service
