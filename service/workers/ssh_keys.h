// The `ssh-keys` metadata value as Google's guest agent reads it: one `user:KEY` line per key,
// KEY being `type base64 [comment]`, optionally with a `google-ssh {"userName": …, "expireOn":
// "RFC 3339"}` comment whose expiry drops the key once past. Project-wide keys apply unless the
// node's metadata says `block-project-ssh-keys: TRUE`. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tpuemu::service {

struct SshAccounts {
  std::map<std::string, std::vector<std::string>> keys;  // user -> "type base64" lines, in order
  std::vector<std::string> rejected;                     // one message per malformed line
};

// Parses `value` (lines separated by \n; blank lines ignored) into `into`, skipping keys that
// expired at `now_unix_ms` and recording every malformed line in `into.rejected` with why.
void ParseSshKeys(const std::string& value, int64_t now_unix_ms, SshAccounts& into);

// A user name the guest agent would make: letters, digits, '.', '_' and '-', 1..32 characters,
// not starting with '-'.
bool ValidUserName(const std::string& user);

}  // namespace tpuemu::service
