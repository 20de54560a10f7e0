// kill -9 durability: every transaction acknowledged (Transaction() returned OK) before a SIGKILL
// must be in the database when it is reopened.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "db/node_repository.h"
#include "db/operation_repository.h"
#include "tests/db/rows.h"
#include "tests/db/temp_dir.h"

namespace tpuemu::db {
namespace {

using testing::MakeNode;
using testing::MakeOperation;
using testing::TempDir;

std::string NodeId(int64_t i) { return "n" + std::to_string(i); }

// The child: commits node+operation pairs forever, writing each acknowledged index to `fd`.
[[noreturn]] void CommitForever(const std::string& path, int fd) {
  Result<std::unique_ptr<Store>> store = Store::Open(path);
  if (!store.ok()) _exit(2);
  NodeRepository nodes(**store);
  OperationRepository ops(**store);
  for (int64_t i = 0;; ++i) {
    Status s = (*store)->Transaction([&](Txn& txn) -> Status {
      TPUEMU_RETURN_IF_ERROR(nodes.Insert(txn, MakeNode("p", "z", NodeId(i))).status());
      return ops.Insert(txn, MakeOperation("p", "z", "op-" + NodeId(i))).status();
    });
    if (!s.ok()) _exit(3);
    // 8 bytes < PIPE_BUF, so each record arrives whole.
    if (write(fd, &i, sizeof i) != static_cast<ssize_t>(sizeof i)) _exit(4);
  }
}

// Kills the child if the test bails out early, so nothing keeps running.
struct ChildGuard {
  pid_t pid = -1;
  ~ChildGuard() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

TEST(CrashTest, AcknowledgedCommitsSurviveSigkill) {
  constexpr int64_t kAcksBeforeKill = 300;
  TempDir dir;
  const std::string path = dir.File("crash.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);

  ChildGuard child;
  child.pid = fork();
  ASSERT_GE(child.pid, 0) << std::strerror(errno);
  if (child.pid == 0) {
    close(fds[0]);
    CommitForever(path, fds[1]);
  }
  close(fds[1]);

  // Collect acknowledgements; kill the child mid-stream once enough have arrived, then drain
  // whatever it acknowledged before dying (the pipe reaches EOF when the child is gone).
  int64_t last_ack = -1;
  int64_t acks = 0;
  bool killed = false;
  char buffer[sizeof(int64_t) * 64];
  size_t pending = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "child stalled after " << acks;
    pollfd pfd{fds[0], POLLIN, 0};
    int ready = poll(&pfd, 1, 1000);
    ASSERT_GE(ready, 0);
    if (ready == 0) continue;
    ssize_t n = read(fds[0], buffer + pending, sizeof buffer - pending);
    ASSERT_GE(n, 0) << std::strerror(errno);
    if (n == 0) break;  // EOF: the child is dead
    pending += static_cast<size_t>(n);
    size_t whole = pending / sizeof(int64_t) * sizeof(int64_t);
    for (size_t off = 0; off < whole; off += sizeof(int64_t)) {
      int64_t index;
      std::memcpy(&index, buffer + off, sizeof index);
      ASSERT_EQ(index, last_ack + 1);
      last_ack = index;
      ++acks;
    }
    std::memmove(buffer, buffer + whole, pending - whole);
    pending -= whole;
    if (!killed && acks >= kAcksBeforeKill) {
      ASSERT_EQ(kill(child.pid, SIGKILL), 0);
      killed = true;
    }
  }
  close(fds[0]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child.pid, &wstatus, 0), child.pid);
  child.pid = -1;
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited by itself with " << WEXITSTATUS(wstatus);
  EXPECT_EQ(WTERMSIG(wstatus), SIGKILL);
  ASSERT_GE(acks, kAcksBeforeKill);

  Result<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  NodeRepository nodes(**store);
  OperationRepository ops(**store);
  for (int64_t i = 0; i <= last_ack; ++i) {
    ASSERT_TRUE(nodes.Get("projects/p/locations/z/nodes/" + NodeId(i)).ok()) << "lost node " << i;
    ASSERT_TRUE(ops.Get("projects/p/locations/z/operations/op-" + NodeId(i)).ok())
        << "lost operation " << i;
  }
  // At most the one commit in flight at the kill may exist beyond the last acknowledgement.
  Result<std::vector<NodeRow>> all = nodes.List("p", "z", 0, 0);
  ASSERT_TRUE(all.ok());
  EXPECT_GE(static_cast<int64_t>(all->size()), last_ack + 1);
  EXPECT_LE(static_cast<int64_t>(all->size()), last_ack + 2);
  std::string integrity;
  ASSERT_TRUE((*store)
                  ->Read([&](Txn& txn) -> Status {
                    Result<Statement*> s = txn.Prepare("PRAGMA integrity_check");
                    if (!s.ok()) return s.status();
                    Result<bool> row = (*s)->Step();
                    if (!row.ok()) return row.status();
                    integrity = (*s)->ColumnText(0);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(integrity, "ok");
  std::cout << "[ crash ] " << acks << " acknowledged commits, all present after SIGKILL\n";
}

}  // namespace
}  // namespace tpuemu::db
