#include "sandbox/reactor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>

#include "tests/sandbox/sandbox_test_util.h"

extern char** environ;

namespace tpuemu::sandbox {
namespace {

using testing::WaitFor;

int Connect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

pid_t SpawnShell(const std::string& script, int stdout_fd = -1) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

TEST(ReactorTest, ListenAcceptsWithCloexecDescriptors) {
  Reactor reactor;
  std::atomic<int> accepted{-1};
  Result<Reactor::Listening> l =
      reactor.Listen("127.0.0.1", 0, [&](int fd) { accepted.store(fd); });
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_GT(l->port, 0);
  const int client = Connect(l->port);
  ASSERT_GE(client, 0);
  ASSERT_TRUE(WaitFor([&] { return accepted.load() >= 0; }));
  const int fd = accepted.load();
  EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  ASSERT_EQ(write(fd, "hi", 2), 2);
  char buf[2];
  ASSERT_EQ(read(client, buf, 2), 2);
  EXPECT_EQ(std::string(buf, 2), "hi");
  close(fd);
  close(client);
}

TEST(ReactorTest, PortInUseThenFreeAfterUnlisten) {
  Reactor reactor;
  Result<Reactor::Listening> first = reactor.Listen("127.0.0.1", 0, [](int fd) { close(fd); });
  ASSERT_TRUE(first.ok());
  Result<Reactor::Listening> second =
      reactor.Listen("127.0.0.1", first->port, [](int fd) { close(fd); });
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("127.0.0.1:" + std::to_string(first->port)),
            std::string::npos);
  EXPECT_NE(second.status().message().find("Address already in use"), std::string::npos)
      << second.status().message();
  reactor.Unlisten(first->id);
  reactor.Unlisten(12345);  // unknown: ignored
  Result<Reactor::Listening> again =
      reactor.Listen("127.0.0.1", first->port, [](int fd) { close(fd); });
  EXPECT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(reactor.Listen("not-an-ip", 0, [](int) {}).ok());
}

TEST(ReactorTest, WatchExitReapsOnlyItsChild) {
  Reactor reactor;
  std::mutex mu;
  int status = -2;
  const pid_t pid = SpawnShell("exit 7");
  // Another child exits too; the reactor must leave it alone.
  const pid_t other = SpawnShell("exit 3");
  reactor.WatchExit(pid, [&](int st) {
    std::lock_guard<std::mutex> lock(mu);
    status = st;
  });
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return status != -2;
  }));
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  int other_status = 0;
  ASSERT_EQ(waitpid(other, &other_status, 0), other);
  EXPECT_EQ(WEXITSTATUS(other_status), 3);
}

TEST(ReactorTest, WatchOutputReadsToEof) {
  Reactor reactor;
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  const pid_t pid = SpawnShell("echo one; echo two", p[1]);
  close(p[1]);
  std::mutex mu;
  std::string data;
  std::atomic<bool> eof{false};
  reactor.WatchOutput(
      p[0],
      [&](std::string_view chunk) {
        std::lock_guard<std::mutex> lock(mu);
        data.append(chunk);
      },
      [&] { eof.store(true); });
  ASSERT_TRUE(WaitFor([&] { return eof.load(); }));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(data, "one\ntwo\n");
  }
  int st = 0;
  waitpid(pid, &st, 0);
}

TEST(ReactorTest, CallbacksMayCallTheReactor) {
  Reactor reactor;
  std::atomic<int> exits{0};
  Result<Reactor::Listening> l = reactor.Listen("127.0.0.1", 0, [&](int fd) {
    close(fd);
    reactor.WatchExit(SpawnShell("exit 0"), [&](int) { exits.fetch_add(1); });
  });
  ASSERT_TRUE(l.ok());
  const int client = Connect(l->port);
  ASSERT_TRUE(WaitFor([&] { return exits.load() == 1; }));
  close(client);
  reactor.Unlisten(l->id);
}

}  // namespace
}  // namespace tpuemu::sandbox
