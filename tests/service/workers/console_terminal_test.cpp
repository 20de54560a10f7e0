// The console's login name for a signed-in person (service/workers/console_terminal.h); the
// login itself is tests/e2e/workers_terminal_test.cpp's.
#include "service/workers/console_terminal.h"

#include <gtest/gtest.h>

#include "service/workers/ssh_keys.h"

namespace tpuemu::service {
namespace {

TEST(ConsoleUserNameTest, IsTheMailboxNameTheAgentAccepts) {
  EXPECT_EQ(ConsoleUserName("Alice.Smith@example.com"), "alice.smith");
  EXPECT_EQ(ConsoleUserName("bob"), "bob");
  EXPECT_EQ(ConsoleUserName("o'neil+tpu@example.com"), "o_neil_tpu");
  EXPECT_EQ(ConsoleUserName("42@example.com"), "u42");
  EXPECT_EQ(ConsoleUserName("-x@example.com"), "u-x");
  EXPECT_EQ(ConsoleUserName(""), "tpuemu");
  EXPECT_EQ(ConsoleUserName(std::string(40, 'a') + "@x"), std::string(32, 'a'));
  for (const char* who : {"Alice.Smith@example.com", "o'neil+tpu@x", "42@x", "", "Émile@x"}) {
    EXPECT_TRUE(ValidUserName(ConsoleUserName(who))) << who << " -> " << ConsoleUserName(who);
  }
}

}  // namespace
}  // namespace tpuemu::service
