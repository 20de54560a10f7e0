// SSH that one tenant cannot spend for all (issue 41): connections that never speak, held open
// against one worker's port 22, cost that worker at most its few unauthenticated slots for the
// login grace (sshd's MaxStartups and LoginGraceTime), and nothing of any other worker's.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/workers_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Plain TCP connections to ip:port that never send a byte; closed when it goes.
class SilentFlood {
 public:
  SilentFlood(const std::string& ip, int port, int count) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) return;
    for (int i = 0; i < count; ++i) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) break;
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        close(fd);
        break;
      }
      fds_.push_back(fd);
    }
  }
  ~SilentFlood() {
    for (int fd : fds_) close(fd);
  }
  SilentFlood(const SilentFlood&) = delete;
  SilentFlood& operator=(const SilentFlood&) = delete;

  int connected() const { return static_cast<int>(fds_.size()); }

  // Waits (up to `deadline`) until every connection was answered: with sshd's identification
  // line (`*greeted`), or closed by the server (`*dropped`). True when all were.
  bool Settle(std::chrono::milliseconds deadline, int* greeted, int* dropped) {
    std::vector<int> state(fds_.size(), 0);  // 0 pending, 1 greeted, 2 dropped
    const auto end = Clock::now() + deadline;
    for (;;) {
      std::vector<pollfd> waiting;
      std::vector<size_t> index;
      for (size_t i = 0; i < fds_.size(); ++i) {
        if (state[i] == 0) {
          waiting.push_back({fds_[i], POLLIN, 0});
          index.push_back(i);
        }
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      if (waiting.empty() || left.count() <= 0) break;
      if (poll(waiting.data(), waiting.size(), static_cast<int>(left.count())) <= 0) continue;
      for (size_t k = 0; k < waiting.size(); ++k) {
        if (waiting[k].revents == 0) continue;
        char buf[256];
        const ssize_t n = recv(waiting[k].fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) {
          state[index[k]] = std::string(buf, static_cast<size_t>(n)).rfind("SSH-", 0) == 0 ? 1 : 2;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          state[index[k]] = 2;
        }
      }
    }
    *greeted = static_cast<int>(std::count(state.begin(), state.end(), 1));
    *dropped = static_cast<int>(std::count(state.begin(), state.end(), 2));
    return *greeted + *dropped == connected();
  }

 private:
  std::vector<int> fds_;
};

class WorkersFloodTest : public WorkersTest {
 protected:
  // A v4-8 of `project` whose ssh-keys let the tester in, READY.
  json CreateReadyIn(const std::string& project, const std::string& id) {
    return WorkersTest::CreateReadyIn(
        project, id,
        {{"acceleratorType", "v4-8"}, {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
  }
  bool Sandboxed(const json& node) const {
    return node.value("workerSandbox", json::object()).value("enabled", false);
  }
  int ReadyzStatus() {
    Result<ClientResponse> r = client_->Request("GET", "/readyz");
    return r.ok() ? r->status : -1;
  }
};

TEST_F(WorkersFloodTest, SilentConnectionsToOneWorkerStarveNeitherOtherProjectsNorItsOwnLogins) {
  json flooded = CreateReadyIn("tenant-a", "flooded");
  if (!Sandboxed(flooded)) GTEST_SKIP() << "tpuemud runs no worker sandboxes here: " << flooded;
  json calm = CreateReadyIn("tenant-b", "calm");
  ASSERT_TRUE(Sandboxed(calm)) << calm.dump();
  ASSERT_EQ(Ssh(calm, 0, "echo warm").exit_code, 0);

  const auto flood_started = Clock::now();
  SilentFlood flood(Ip(flooded, 0), std::stoi(Port(flooded, 0)), 600);
  ASSERT_EQ(flood.connected(), 600);
  // Past its few unauthenticated slots, the worker drops a connection at once (MaxStartups): the
  // whole flood is answered, a banner for the few and a close for the rest, long before sshd's
  // grace would end the few.
  int greeted = 0;
  int dropped = 0;
  EXPECT_TRUE(flood.Settle(std::chrono::seconds(15), &greeted, &dropped))
      << greeted << " greeted, " << dropped << " dropped of " << flood.connected();
  std::cout << "flood of " << flood.connected() << ": " << greeted << " got sshd's banner, "
            << dropped << " were dropped" << std::endl;
  EXPECT_GE(greeted, 1);
  EXPECT_LE(greeted, 10);
  EXPECT_EQ(ReadyzStatus(), 200);

  // Another project's worker logs in as if nothing happened. The bound is generous for a loaded
  // 2-core CI machine (unflooded it takes ~0.1-0.3 s); what the test holds is that the login
  // succeeds while the flood is held.
  const auto b_started = Clock::now();
  ProcessResult other = Ssh(calm, 0, "echo ok");
  const auto b_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - b_started).count();
  std::cout << "login to another project's worker under the flood: " << b_ms << " ms" << std::endl;
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.out, "ok\n");
  EXPECT_LT(b_ms, 5000);
  EXPECT_EQ(ReadyzStatus(), 200);

  // The flooded worker itself: a client retrying (as ssh users and tools do) logs in once sshd's
  // login grace (20 s) has ended the silent connections that hold its slots.
  ProcessResult own;
  int attempts = 0;
  while (Clock::now() - flood_started < std::chrono::seconds(60)) {
    ++attempts;
    own = Ssh(flooded, 0, "echo mine");
    if (own.exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a client's back-off
  }
  const auto a_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - flood_started).count();
  std::cout << "login to the flooded worker: after " << a_ms << " ms from the flood's start, "
            << attempts << " attempts" << std::endl;
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.out, "mine\n");
  EXPECT_EQ(ReadyzStatus(), 200);

  // A connection that logged in holds no slot (sshd logged "Accepted publickey"): more sessions
  // than there are slots stay open together, and yet another login gets in.
  std::vector<std::unique_ptr<ChildProcess>> sessions;
  for (int i = 1; i <= 12; ++i) {
    sessions.push_back(std::make_unique<ChildProcess>());
    ASSERT_TRUE(sessions.back()->Start(
        SshArgs(flooded, 0, "tester", "touch /tmp/held.$$ && exec sleep 300"), {}));
    ProcessResult count;
    ASSERT_TRUE(WaitFor(
        [&] {
          count = Ssh(flooded, 0, "ls /tmp | grep -c '^held[.]'");
          return count.out == std::to_string(i) + "\n";
        },
        std::chrono::seconds(20)))
        << "session " << i << ": " << count.out << count.err;
  }
  ProcessResult more = Ssh(flooded, 0, "echo more");
  EXPECT_EQ(more.out, "more\n") << more.err;
}

}  // namespace
}  // namespace tpuemu::testing
