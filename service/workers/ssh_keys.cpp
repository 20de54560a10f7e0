#include "service/workers/ssh_keys.h"

#include <array>
#include <chrono>
#include <ctime>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tpuemu::service {
namespace {

constexpr std::array<std::string_view, 8> kKeyTypes = {
    "ssh-rsa",
    "ssh-ed25519",
    "ssh-dss",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
};

bool Base64(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/' || c == '=';
    if (!ok) return false;
  }
  return true;
}

// "2026-11-27T20:00:00+0000" or "…Z" as unix ms; -1 when it cannot be read.
int64_t ParseExpiry(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return -1;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

std::string Quote(std::string_view line) {
  std::string shown(line.substr(0, 60));
  if (line.size() > 60) shown += "…";
  return "'" + shown + "'";
}

}  // namespace

bool ValidUserName(const std::string& user) {
  if (user.empty() || user.size() > 32 || user[0] == '-') return false;
  for (char c : user) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void ParseSshKeys(const std::string& value, int64_t now_unix_ms, SshAccounts& into) {
  size_t at = 0;
  while (at <= value.size()) {
    size_t nl = value.find('\n', at);
    std::string_view line(value.data() + at, (nl == std::string::npos ? value.size() : nl) - at);
    at = nl == std::string::npos ? value.size() + 1 : nl + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      into.rejected.push_back("ssh-keys line " + Quote(line) + ": no 'user:' before the key");
      continue;
    }
    std::string user(line.substr(0, colon));
    if (!ValidUserName(user)) {
      into.rejected.push_back("ssh-keys line " + Quote(line) + ": invalid user name '" + user +
                              "'");
      continue;
    }
    std::string_view key = line.substr(colon + 1);
    const size_t space = key.find(' ');
    std::string_view type = key.substr(0, space);
    bool known = false;
    for (std::string_view t : kKeyTypes) known = known || t == type;
    if (!known || space == std::string_view::npos) {
      into.rejected.push_back("ssh-keys line " + Quote(line) + ": unknown key type '" +
                              std::string(type) + "'");
      continue;
    }
    std::string_view rest = key.substr(space + 1);
    const size_t blob_end = rest.find(' ');
    std::string_view blob = rest.substr(0, blob_end);
    if (!Base64(blob)) {
      into.rejected.push_back("ssh-keys line " + Quote(line) + ": the key is not base64");
      continue;
    }
    bool control = false;
    for (char c : line) control = control || static_cast<unsigned char>(c) < 0x20;
    if (control) {
      into.rejected.push_back("ssh-keys line " + Quote(line) + ": control characters");
      continue;
    }
    std::string_view comment =
        blob_end == std::string_view::npos ? std::string_view() : rest.substr(blob_end + 1);
    if (comment.starts_with("google-ssh ")) {
      nlohmann::json meta =
          nlohmann::json::parse(comment.substr(11), nullptr, /*allow_exceptions=*/false);
      if (meta.is_object() && meta.contains("expireOn") && meta["expireOn"].is_string()) {
        int64_t expiry = ParseExpiry(meta["expireOn"].get<std::string>());
        if (expiry >= 0 && expiry <= now_unix_ms) continue;  // expired: as if absent
      }
    }
    into.keys[user].push_back(std::string(type) + " " + std::string(blob));
  }
}

}  // namespace tpuemu::service
