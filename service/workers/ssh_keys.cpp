#include "service/workers/ssh_keys.h"

#include <array>
#include <cctype>
#include <ctime>

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

std::string Quote(std::string_view line) {
  std::string shown(line.substr(0, 60));
  if (line.size() > 60) shown += "…";
  return "'" + shown + "'";
}

}  // namespace

bool ValidUserName(const std::string& user) {
  if (user.empty() || user.size() > 32 || user[0] == '-') return false;
  bool digits_only = true;
  for (char c : user) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
    digits_only = digits_only && c >= '0' && c <= '9';
  }
  // getent and id read an all-digit name as a uid: "1000" would be someone else's account.
  return !digits_only;
}

std::optional<int64_t> ParseExpireOn(std::string_view text) {
  size_t at = 0;
  // `width` digits at `at` as a number, or -1.
  auto digits = [&](size_t width) -> int {
    if (at + width > text.size()) return -1;
    int n = 0;
    for (size_t i = 0; i < width; ++i) {
      const char c = text[at + i];
      if (c < '0' || c > '9') return -1;
      n = n * 10 + (c - '0');
    }
    at += width;
    return n;
  };
  auto literal = [&](char c) {
    if (at >= text.size() || text[at] != c) return false;
    ++at;
    return true;
  };
  const int year = digits(4);
  if (year < 0 || !literal('-')) return std::nullopt;
  const int month = digits(2);
  if (month < 1 || month > 12 || !literal('-')) return std::nullopt;
  const int day = digits(2);
  if (day < 1 || !literal('T')) return std::nullopt;
  const int hour = digits(2);
  if (hour < 0 || hour > 23 || !literal(':')) return std::nullopt;
  const int minute = digits(2);
  if (minute < 0 || minute > 59 || !literal(':')) return std::nullopt;
  const int second = digits(2);
  if (second < 0 || second > 59) return std::nullopt;
  // Go reads a fraction after the seconds even where the layout has none ('.' or ',').
  if (at + 1 < text.size() && (text[at] == '.' || text[at] == ',') &&
      std::isdigit(static_cast<unsigned char>(text[at + 1]))) {
    ++at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
  }
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return std::nullopt;
  int offset_minutes = 0;
  if (literal('Z')) {
    // RFC 3339's UTC.
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const int sign = text[at] == '-' ? -1 : 1;
    ++at;
    const int oh = digits(2);
    if (oh < 0 || oh > 23) return std::nullopt;
    (void)literal(':');  // RFC 3339's "+01:00", or the agent's fallback layout's "+0100"
    const int om = digits(2);
    if (om < 0 || om > 59) return std::nullopt;
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return (static_cast<int64_t>(timegm(&tm)) - int64_t{offset_minutes} * 60) * 1000;
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
    if (user == "root") {
      into.rejected.push_back("ssh-keys line " + Quote(line) +
                              ": user 'root' never gets keys (no root logins through metadata)");
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
    // Google's agent: a comment starting "google-ssh" carries JSON whose expireOn must parse;
    // a key whose expiry cannot be read is refused, never kept for ever.
    if (comment.starts_with("google-ssh")) {
      const size_t json_at = comment.find(' ');
      if (json_at == std::string_view::npos) {
        into.rejected.push_back("ssh-keys line " + Quote(line) +
                                ": google-ssh without its {\"expireOn\": …}");
        continue;
      }
      nlohmann::json meta =
          nlohmann::json::parse(comment.substr(json_at + 1), nullptr, /*allow_exceptions=*/false);
      if (!meta.is_object()) {
        into.rejected.push_back("ssh-keys line " + Quote(line) +
                                ": the google-ssh comment is not a JSON object");
        continue;
      }
      // Go's encoding/json matches field names ignoring case.
      const nlohmann::json* expire_on = nullptr;
      for (auto it = meta.begin(); it != meta.end(); ++it) {
        std::string name = it.key();
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (name == "expireon") expire_on = &it.value();
      }
      std::optional<int64_t> expiry;
      if (expire_on != nullptr && expire_on->is_string()) {
        expiry = ParseExpireOn(expire_on->get<std::string>());
      }
      if (!expiry) {
        const std::string why =
            expire_on == nullptr ? "the google-ssh comment has no expireOn"
                                 : "google-ssh expireOn " +
                                       Quote(expire_on->is_string() ? expire_on->get<std::string>()
                                                                    : expire_on->dump()) +
                                       " is not an RFC 3339 time";
        into.rejected.push_back("ssh-keys line " + Quote(line) + ": " + why);
        continue;
      }
      if (*expiry <= now_unix_ms) continue;  // expired: as if absent
      if (into.next_expiry_unix_ms == 0 || *expiry < into.next_expiry_unix_ms) {
        into.next_expiry_unix_ms = *expiry;
      }
    }
    into.keys[user].push_back(std::string(type) + " " + std::string(blob));
  }
}

}  // namespace tpuemu::service
