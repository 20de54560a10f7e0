// The `ssh-keys` metadata value as Google's guest agent reads it: one `user:KEY` line per key,
// KEY being `type base64 [comment]`, optionally with a `google-ssh {"userName": …, "expireOn":
// "RFC 3339"}` comment whose expiry drops the key once past. Project-wide keys apply unless the
// node's metadata says `block-project-ssh-keys: TRUE`. Pure functions, thread-safe.
//
// Stricter than a plain split, on purpose: `root` never gets keys (no root logins through
// metadata), and a google-ssh comment whose expiry cannot be read rejects its key (Google's agent
// does so too) instead of making a key that never expires. Existing system accounts are refused
// inside the worker, where they are known (account_agent.sh).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpuemu::service {

struct SshAccounts {
  std::map<std::string, std::vector<std::string>> keys;  // user -> "type base64" lines, in order
  std::vector<std::string> rejected;                     // one message per refused line
  // The earliest expiry (unix ms) of a key in `keys`, 0 when none expires: when the users must be
  // computed again.
  int64_t next_expiry_unix_ms = 0;
};

// Parses `value` (lines separated by \n; blank lines ignored) into `into`, skipping keys that
// expired at `now_unix_ms` and recording every refused line in `into.rejected` with why.
void ParseSshKeys(const std::string& value, int64_t now_unix_ms, SshAccounts& into);

// A user name the guest agent would make: letters, digits, '.', '_' and '-', 1..32 characters,
// not starting with '-', not all digits (useradd refuses those; getent would read a uid). (`root`
// is a valid name; ParseSshKeys refuses it for its own reason.)
bool ValidUserName(const std::string& user);

// A google-ssh `expireOn` as unix ms, read as Google's guest agent reads it (Go's time.Parse
// with time.RFC3339, else "2006-01-02T15:04:05-0700"): "2026-11-27T20:00:00Z",
// "…T20:00:00.5+01:00", "…T20:00:00+0100". nullopt for anything else (out-of-range fields, a
// lowercase 't' or 'z', a missing offset).
std::optional<int64_t> ParseExpireOn(std::string_view text);

}  // namespace tpuemu::service
