// Workers' networks: each worker its own network namespace, the workers of one slice on a
// private network of their own (SliceNetwork), nothing of it in the host's namespace, and
// tpuemud listening in a slice's network (SliceNetwork::Listen). Only loopback and addresses inside
// namespaces these tests make are ever sent to.
#include "sandbox/slice_network.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "sandbox/worker_box.h"
#include "tests/sandbox/sandbox_test_util.h"

namespace tpuemu::sandbox {
namespace {

using std::chrono::milliseconds;
using testing::ReadFile;

// A TCP listener on port 8476 of every address, answering each connection with the host name.
constexpr char kServe[] =
    "exec /usr/bin/python3 -c 'import socket\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind((\"0.0.0.0\", 8476)); s.listen(8)\n"
    "while True:\n"
    "  c, _ = s.accept(); c.sendall(socket.gethostname().encode()); c.close()'";

// Connects to ip:8476 and prints what it says, or the error's class.
std::string Fetch(const std::string& ip) {
  return "/usr/bin/python3 -c 'import socket\n"
         "try:\n"
         "  s = socket.create_connection((\"" +
         ip +
         "\", 8476), timeout=2); print(s.recv(100).decode())\n"
         "except Exception as e: print(type(e).__name__)'";
}

class NetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    support_ = Probe(tmp_.path() + "/workers", "");
    if (!support_.ok) GTEST_SKIP() << support_.reason;
  }

  std::unique_ptr<SliceNetwork> Network() {
    Result<std::unique_ptr<SliceNetwork>> n = SliceNetwork::Create(support_, "10.0.0.0/8");
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? std::move(n).value() : nullptr;
  }

  std::unique_ptr<WorkerBox> Boot(const std::string& name, const SliceNetwork* network,
                                  const std::string& address) {
    BootSpec spec;
    spec.dir = tmp_.path() + "/workers/" + name;
    spec.hostname = "t1v-n-net-" + name;
    spec.cgroup_name = "net-" + std::to_string(getpid()) + "-" + name;
    if (network != nullptr) {
      spec.network_pid = network->pid();
      spec.address = address;
    }
    Result<std::unique_ptr<WorkerBox>> box = WorkerBox::Boot(support_, spec);
    EXPECT_TRUE(box.ok()) << box.status().ToString();
    return box.ok() ? std::move(box).value() : nullptr;
  }

  static std::string Sh(const WorkerBox& box, const std::string& script) {
    Result<std::pair<int, std::string>> r =
        box.Run({"/bin/sh", "-c", script}, "", milliseconds(10000));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->second : "";
  }

  testing::TempDir tmp_;
  Support support_;
};

TEST_F(NetworkTest, ASlicesWorkersReachEachOtherAndNoOneElse) {
  auto slice = Network();
  auto other = Network();
  ASSERT_TRUE(slice && other);
  auto a0 = Boot("a0", slice.get(), "10.77.0.2/8");
  auto a1 = Boot("a1", slice.get(), "10.77.0.3/8");
  auto b0 = Boot("b0", other.get(), "10.77.0.4/8");
  ASSERT_TRUE(a0 && a1 && b0);
  EXPECT_NE(Sh(*a0, "ip -o -4 addr show eth0").find("10.77.0.2/8"), std::string::npos);
  // Every worker may listen on the same port of every address, as every TPU host does.
  std::vector<pid_t> servers;
  for (WorkerBox* box : {a0.get(), a1.get(), b0.get()}) {
    Result<pid_t> pid = box->Spawn({"/bin/sh", "-c", kServe}, {}, SpawnIo{});
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    servers.push_back(*pid);
  }
  ASSERT_TRUE(testing::WaitFor([&] { return Sh(*a1, Fetch("127.0.0.1")) == "t1v-n-net-a1\n"; },
                               milliseconds(10000)));
  ASSERT_TRUE(testing::WaitFor([&] { return Sh(*b0, Fetch("127.0.0.1")) == "t1v-n-net-b0\n"; },
                               milliseconds(10000)));
  EXPECT_EQ(Sh(*a0, Fetch("10.77.0.3")), "t1v-n-net-a1\n");
  EXPECT_EQ(Sh(*a1, Fetch("10.77.0.2")), "t1v-n-net-a0\n");
  // Another slice's worker is not on this network.
  EXPECT_NE(Sh(*b0, Fetch("10.77.0.3")), "t1v-n-net-a1\n");
  EXPECT_NE(Sh(*a0, Fetch("10.77.0.4")), "t1v-n-net-b0\n");
  // Root inside may not change its interfaces (the namespace is not its own).
  EXPECT_NE(Sh(*a0, "ip addr add 10.77.0.4/8 dev eth0 2>&1; echo rc=$?"), "rc=0\n");
  // The host has no interface, address or route on these networks (no traffic is sent there).
  EXPECT_EQ(ReadFile("/proc/net/fib_trie").find("10.77."), std::string::npos);
  for (WorkerBox* box : {a0.get(), a1.get(), b0.get()}) box->Kill();
  for (pid_t pid : servers) waitpid(pid, nullptr, 0);
}

TEST_F(NetworkTest, TpuemudListensInASlicesNetworkWhereOnlyItsWorkersReachIt) {
  auto slice = Network();
  auto other = Network();
  ASSERT_TRUE(slice && other);
  auto a = Boot("a", slice.get(), "10.78.0.2/8");
  auto b = Boot("b", other.get(), "10.78.0.3/8");
  ASSERT_TRUE(a && b);
  Result<int> fd = slice->Listen("169.254.169.254", 80);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  const std::string ask =
      "/usr/bin/python3 -c 'import socket\n"
      "try:\n"
      "  s = socket.create_connection((\"169.254.169.254\", 80), timeout=2); "
      "s.sendall(b\"hello\"); print(\"sent\")\n"
      "except Exception as e: print(type(e).__name__)'";
  // b's slice has its own 169.254.169.254: nobody listens there.
  EXPECT_EQ(Sh(*b, ask), "ConnectionRefusedError\n");
  EXPECT_EQ(Sh(*a, ask), "sent\n");
  pollfd p{*fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  sockaddr_in peer{};
  socklen_t peer_size = sizeof(peer);
  const int conn = accept(*fd, reinterpret_cast<sockaddr*>(&peer), &peer_size);
  ASSERT_GE(conn, 0);
  char ip[32] = {0};
  inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof(ip));
  EXPECT_STREQ(ip, "10.78.0.2") << "the peer's address says which worker asks";
  char buf[16] = {0};
  p = {conn, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  EXPECT_EQ(read(conn, buf, sizeof(buf) - 1), 5);
  EXPECT_STREQ(buf, "hello");
  close(conn);
  close(*fd);
  // A worker's own port 80 is its own: root inside serves it, as on a VM.
  EXPECT_EQ(Sh(*a,
               "/usr/bin/python3 -c 'import socket; s=socket.socket(); "
               "s.bind((\"0.0.0.0\", 80)); s.listen(1); print(\"bound\")'"),
            "bound\n");
  // The host's namespace has no 169.254.169.254 of a worker's.
  EXPECT_EQ(ReadFile("/proc/net/fib_trie").find("169.254.169.254"), std::string::npos);
}

}  // namespace
}  // namespace tpuemu::sandbox
