#include "db/change_payloads.h"

#include <charconv>
#include <optional>
#include <vector>

namespace tpuemu::db {
namespace {

// `payload` split at its first count - 1 spaces (the last word runs to the end); nullopt when it
// has fewer than `required` words.
std::optional<std::vector<std::string>> PayloadWords(std::string_view payload, size_t count,
                                                     size_t required) {
  std::vector<std::string> words;
  size_t at = 0;
  while (words.size() + 1 < count) {
    const size_t space = payload.find(' ', at);
    if (space == std::string_view::npos) break;
    words.emplace_back(payload.substr(at, space - at));
    at = space + 1;
  }
  words.emplace_back(payload.substr(at));
  if (words.size() < required) return std::nullopt;
  words.resize(count);
  return words;
}

Status Malformed(std::string_view channel, std::string_view payload, std::string_view format) {
  return Status::InvalidArgument(std::string(channel) + " payload '" + std::string(payload) +
                                 "' is not \"" + std::string(format) + "\"");
}

}  // namespace

Result<EventChange> ParseEventChange(std::string_view payload) {
  std::optional<std::vector<std::string>> w = PayloadWords(payload, 2, 2);
  EventChange change;
  if (w) {
    const std::string& seq = (*w)[1];
    auto [end, ec] = std::from_chars(seq.data(), seq.data() + seq.size(), change.seq);
    if (ec == std::errc() && end == seq.data() + seq.size() && !seq.empty()) {
      change.project = std::move((*w)[0]);
      return change;
    }
  }
  return Malformed(kEventsChannel, payload, "<project> <seq>");
}

Result<JobChange> ParseJobChange(std::string_view payload) {
  std::optional<std::vector<std::string>> w = PayloadWords(payload, 3, 2);
  if (!w) return Malformed(kJobsChannel, payload, "<name> <state> <owner>");
  return JobChange{
      .name = std::move((*w)[0]), .state = std::move((*w)[1]), .owner = std::move((*w)[2])};
}

Result<NodeChange> ParseNodeChange(std::string_view payload) {
  std::optional<std::vector<std::string>> w = PayloadWords(payload, 3, 2);
  if (!w) return Malformed(kNodesChannel, payload, "<name> <state> <owner>");
  NodeChange change{
      .name = std::move((*w)[0]), .state = std::move((*w)[1]), .owner = std::move((*w)[2])};
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    const size_t slash = change.name.find('/', at);
    parts.push_back(change.name.substr(at, slash - at));
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  if (parts.size() == 6 && parts[0] == "projects" && parts[2] == "locations" &&
      parts[4] == "nodes") {
    change.project = std::move(parts[1]);
    change.zone = std::move(parts[3]);
    change.node_id = std::move(parts[5]);
  }
  return change;
}

Result<SettingsChange> ParseSettingsChange(std::string_view payload) {
  std::optional<std::vector<std::string>> w = PayloadWords(payload, 2, 2);
  if (!w) return Malformed(kSettingsChannel, payload, "<table> <replica>");
  SettingsChange change;
  change.reset = (*w)[0] == "reset";
  if (!change.reset) change.table = std::move((*w)[0]);
  change.replica = std::move((*w)[1]);
  return change;
}

std::string SettingsResetPayload(std::string_view replica) {
  return "reset " + std::string(replica);
}

}  // namespace tpuemu::db
