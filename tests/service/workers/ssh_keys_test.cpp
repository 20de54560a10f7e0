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

TEST(SshKeysTest, UserNames) {
  EXPECT_TRUE(ValidUserName("root"));
  EXPECT_TRUE(ValidUserName("a.b_c-d"));
  EXPECT_FALSE(ValidUserName(""));
  EXPECT_FALSE(ValidUserName("-rf"));
  EXPECT_FALSE(ValidUserName("a;b"));
  EXPECT_FALSE(ValidUserName(std::string(33, 'a')));
}

}  // namespace
}  // namespace tpuemu::service
