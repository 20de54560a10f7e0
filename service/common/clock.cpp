#include "service/common/clock.h"

#include <cstdio>
#include <ctime>

namespace tpuemu::service {

std::string FormatRfc3339(WallTime t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(((us % 1000000) + 1000000) % 1000000));
  return buf;
}

Result<int64_t> ParseRfc3339Ms(std::string_view text, std::string_view field) {
  auto bad = [&] {
    return Status::InvalidArgument("Invalid value for field '" + std::string(field) + "': '" +
                                   std::string(text) +
                                   "' is not an RFC 3339 timestamp (e.g. 2024-04-01T12:00:00Z).");
  };
  int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0, used = 0;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &mon, &day, &hour, &min, &sec,
                  &used) != 6 ||
      used != 19 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 ||
      sec > 60) {
    return bad();
  }
  std::size_t at = 19;
  int64_t ms = 0;
  if (at < s.size() && s[at] == '.') {
    int64_t scale = 100;
    for (++at; at < s.size() && s[at] >= '0' && s[at] <= '9'; ++at) {
      ms += (s[at] - '0') * scale;
      scale /= 10;
    }
  }
  int64_t offset_min = 0;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z') && at + 1 == s.size()) {
  } else if (at + 6 == s.size() && (s[at] == '+' || s[at] == '-') && s[at + 3] == ':') {
    int oh = 0, om = 0;
    if (std::sscanf(s.c_str() + at + 1, "%2d:%2d", &oh, &om) != 2) return bad();
    offset_min = (s[at] == '+' ? 1 : -1) * (oh * 60 + om);
  } else {
    return bad();
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  const int64_t secs = static_cast<int64_t>(timegm(&tm));
  return (secs - offset_min * 60) * 1000 + ms;
}

Result<int64_t> ParseDurationMs(std::string_view text, std::string_view field) {
  auto bad = [&] {
    return Status::InvalidArgument("Invalid value for field '" + std::string(field) + "': '" +
                                   std::string(text) +
                                   "' is not a duration in seconds (e.g. \"3600s\", \"1.5s\").");
  };
  if (text.size() < 2 || text.back() != 's') return bad();
  std::string_view num = text.substr(0, text.size() - 1);
  int64_t whole = 0, frac_ms = 0;
  std::size_t i = 0;
  for (; i < num.size() && num[i] >= '0' && num[i] <= '9'; ++i) {
    whole = whole * 10 + (num[i] - '0');
    if (whole > 315576000000) return bad();  // Duration's documented range
  }
  if (i == 0) return bad();
  if (i < num.size()) {
    if (num[i] != '.') return bad();
    int64_t scale = 100;
    for (++i; i < num.size(); ++i) {
      if (num[i] < '0' || num[i] > '9') return bad();
      frac_ms += (num[i] - '0') * scale;
      scale /= 10;
    }
  }
  return whole * 1000 + frac_ms;
}

std::string FormatDurationMs(int64_t ms) {
  char buf[48];
  if (ms % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(ms / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%lld.%03llds", static_cast<long long>(ms / 1000),
                  static_cast<long long>(ms % 1000));
  }
  return buf;
}

int64_t ToUnixMs(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace tpuemu::service
