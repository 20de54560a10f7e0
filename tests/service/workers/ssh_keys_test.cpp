#include "service/workers/ssh_keys.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;  // 2027-01-15

TEST(SshKeysTest, ParsesGcloudLinesPerUserInOrder) {
  SshAccounts a;
  ParseSshKeys(
      "alice:ssh-rsa AAAAB3Nza alice\nbob:ssh-ed25519 AAAAC3Nz bob\r\n\nalice:ssh-ed25519 AAAAZZ",
      kNow, a);
  ASSERT_EQ(a.keys.size(), 2u);
  EXPECT_EQ(a.keys["alice"], (std::vector<std::string>{"ssh-rsa AAAAB3Nza", "ssh-ed25519 AAAAZZ"}));
  EXPECT_EQ(a.keys["bob"], (std::vector<std::string>{"ssh-ed25519 AAAAC3Nz"}));
  EXPECT_TRUE(a.rejected.empty());
}

TEST(SshKeysTest, RejectsMalformedLinesSayingWhyAndKeepsTheRest) {
  SshAccounts a;
  ParseSshKeys(
      "no-colon-here\n"
      "bad user:ssh-rsa AAAA\n"
      "-x:ssh-rsa AAAA\n"
      "carol:ssh-foo AAAA\n"
      "dave:ssh-rsa not*base64\n"
      "erin:ssh-rsa\n"
      "frank:ssh-ed25519 AAAAok frank",
      kNow, a);
  EXPECT_EQ(a.keys.size(), 1u);
  EXPECT_TRUE(a.keys.count("frank"));
  ASSERT_EQ(a.rejected.size(), 6u);
  EXPECT_NE(a.rejected[0].find("no 'user:'"), std::string::npos);
  EXPECT_NE(a.rejected[1].find("invalid user name 'bad user'"), std::string::npos);
  EXPECT_NE(a.rejected[3].find("unknown key type 'ssh-foo'"), std::string::npos);
  EXPECT_NE(a.rejected[4].find("not base64"), std::string::npos);
}

TEST(SshKeysTest, DropsExpiredGoogleSshKeys) {
  SshAccounts a;
  ParseSshKeys(
      "old:ssh-rsa AAAA google-ssh "
      "{\"userName\":\"old@x\",\"expireOn\":\"2020-01-01T00:00:00+0000\"}\n"
      "new:ssh-rsa AAAA google-ssh "
      "{\"userName\":\"new@x\",\"expireOn\":\"2099-01-01T00:00:00+0000\"}",
      kNow, a);
  EXPECT_FALSE(a.keys.count("old"));
  EXPECT_TRUE(a.keys.count("new"));
}

TEST(SshKeysTest, AnExpiryThatCannotBeReadRejectsTheKeySayingWhy) {
  SshAccounts a;
  ParseSshKeys(
      "garbage:ssh-rsa AAAA google-ssh {\"userName\":\"g@x\",\"expireOn\":\"garbage\"}\n"
      "none:ssh-rsa AAAA google-ssh {\"userName\":\"n@x\"}\n"
      "number:ssh-rsa AAAA google-ssh {\"expireOn\":4102444800}\n"
      "notjson:ssh-rsa AAAA google-ssh {expireOn: 2099}\n"
      "bare:ssh-rsa AAAA google-ssh\n"
      "nozone:ssh-rsa AAAA google-ssh {\"expireOn\":\"2099-01-01T00:00:00\"}\n"
      "ok:ssh-rsa AAAA google-ssh {\"ExpireOn\":\"2099-01-01T00:00:00Z\"}\n"
      "plain:ssh-rsa AAAA any comment at all",
      kNow, a);
  EXPECT_EQ(a.keys.size(), 2u);
  EXPECT_TRUE(a.keys.count("ok")) << "Go's encoding/json matches names ignoring case";
  EXPECT_TRUE(a.keys.count("plain"));
  ASSERT_EQ(a.rejected.size(), 6u);
  EXPECT_NE(a.rejected[0].find("expireOn 'garbage' is not an RFC 3339 time"), std::string::npos)
      << a.rejected[0];
  EXPECT_NE(a.rejected[1].find("has no expireOn"), std::string::npos) << a.rejected[1];
  EXPECT_NE(a.rejected[2].find("expireOn '4102444800'"), std::string::npos) << a.rejected[2];
  EXPECT_NE(a.rejected[3].find("not a JSON object"), std::string::npos) << a.rejected[3];
  EXPECT_NE(a.rejected[4].find("google-ssh without"), std::string::npos) << a.rejected[4];
  EXPECT_NE(a.rejected[5].find("'2099-01-01T00:00:00' is not"), std::string::npos) << a.rejected[5];
}

TEST(SshKeysTest, TheEarliestExpiryOfAKeptKeyIsWhenToLookAgain) {
  SshAccounts a;
  ParseSshKeys("a:ssh-rsa AAAA plain", kNow, a);
  EXPECT_EQ(a.next_expiry_unix_ms, 0);
  ParseSshKeys(
      "a:ssh-rsa AAAA google-ssh {\"expireOn\":\"2099-01-01T00:00:00Z\"}\n"
      "b:ssh-rsa AAAA google-ssh {\"expireOn\":\"2028-01-01T00:00:00Z\"}\n"
      "c:ssh-rsa AAAA google-ssh {\"expireOn\":\"2020-01-01T00:00:00Z\"}",
      kNow, a);
  EXPECT_EQ(a.next_expiry_unix_ms, *ParseExpireOn("2028-01-01T00:00:00Z"));
  EXPECT_FALSE(a.keys.count("c"));
}

TEST(SshKeysTest, RootNeverGetsKeys) {
  SshAccounts a;
  ParseSshKeys("root:ssh-ed25519 AAAA root\nalice:ssh-ed25519 AAAA", kNow, a);
  EXPECT_FALSE(a.keys.count("root"));
  EXPECT_TRUE(a.keys.count("alice"));
  ASSERT_EQ(a.rejected.size(), 1u);
  EXPECT_NE(a.rejected[0].find("user 'root' never gets keys"), std::string::npos);
}

TEST(SshKeysTest, ExpireOnAsGoogleAgentParsesIt) {
  // RFC 3339 (Go's time.RFC3339) and the agent's fallback "2006-01-02T15:04:05-0700".
  EXPECT_EQ(ParseExpireOn("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseExpireOn("2027-01-15T08:00:00Z"), kNow);
  EXPECT_EQ(ParseExpireOn("2026-11-27T20:00:00+01:00"), ParseExpireOn("2026-11-27T19:00:00Z"));
  EXPECT_EQ(ParseExpireOn("2026-11-27T20:00:00-0130"), ParseExpireOn("2026-11-27T21:30:00Z"));
  EXPECT_EQ(ParseExpireOn("2026-11-27T20:00:00.123456Z"), ParseExpireOn("2026-11-27T20:00:00Z"));
  EXPECT_EQ(ParseExpireOn("2024-02-29T00:00:00Z"),
            ParseExpireOn("2024-03-01T00:00:00Z").value() - 86'400'000);
  for (const char* bad :
       {"garbage", "", "2026-11-27", "2026-11-27T20:00:00", "2026-11-27t20:00:00Z",
        "2026-11-27T20:00:00z", "2026-11-27 20:00:00Z", "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-27T24:00:00Z",
        "2026-11-27T20:60:00Z", "2026-11-27T20:00:60Z", "2026-11-27T20:00:00+24:00",
        "2026-11-27T20:00:00+01:60", "2026-11-27T20:00:00Z ", "26-11-27T20:00:00Z",
        "2026-11-27T20:00:00.Z", "2026-11-27T20:00Z"}) {
    EXPECT_FALSE(ParseExpireOn(bad).has_value()) << bad;
  }
}

TEST(SshKeysTest, UserNames) {
  EXPECT_TRUE(ValidUserName("root"));
  EXPECT_TRUE(ValidUserName("a.b_c-d"));
  EXPECT_FALSE(ValidUserName(""));
  EXPECT_FALSE(ValidUserName("-rf"));
  EXPECT_FALSE(ValidUserName("a;b"));
  EXPECT_FALSE(ValidUserName(std::string(33, 'a')));
  EXPECT_FALSE(ValidUserName("1000")) << "getent would read a uid";
  EXPECT_TRUE(ValidUserName("u1000"));
}

}  // namespace
}  // namespace tpuemu::service
