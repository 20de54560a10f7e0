// Prints durable-create throughput (one txn = node row + operation row, WAL + synchronous=NORMAL
// on a file). Speed is only printed, never asserted; the assertions check that every row landed.
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include "db/node_repository.h"
#include "db/operation_repository.h"
#include "tests/db/rows.h"
#include "tests/db/temp_dir.h"
#include "tests/support/sanitizers.h"

namespace tpuemu::db {
namespace {

using testing::MakeNode;
using testing::MakeOperation;
using testing::TempDir;

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void RunCreates(int threads, int per_thread) {
  TempDir dir;
  Result<std::unique_ptr<Store>> opened = Store::Open(dir.File("bench.db"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  NodeRepository nodes(store);
  OperationRepository ops(store);
  std::atomic<int> failures{0};
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = CpuSeconds();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        const std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
        NodeRow node = MakeNode("p", "z", id);
        node.pending_operation = "projects/p/locations/z/operations/op-" + id;
        node.pending_due_ms = 1000 + i;
        Status s = store.Transaction([&](Txn& txn) -> Status {
          TPUEMU_RETURN_IF_ERROR(nodes.Insert(txn, node).status());
          return ops.Insert(txn, MakeOperation("p", "z", "op-" + id, node.name)).status();
        });
        if (!s.ok()) ++failures;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // CPU time too: on a shared 2-core machine wall time mostly measures the neighbours.
  const double cpu_seconds = CpuSeconds() - cpu_start;
  EXPECT_EQ(failures.load(), 0);
  Result<std::vector<NodeRow>> all = nodes.List("p", "z", 0, 0);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), static_cast<size_t>(threads) * per_thread);
  EXPECT_EQ(ops.List("p", "-", 0, 0)->size(), static_cast<size_t>(threads) * per_thread);
  std::cout << "[ throughput ] " << threads << " thread(s) x " << per_thread
            << " creates: " << static_cast<int64_t>(threads * per_thread / seconds)
            << " durable creates/s wall (" << seconds << " s), "
            << static_cast<int64_t>(threads * per_thread / cpu_seconds) << " per CPU-second ("
            << cpu_seconds << " s user+sys)\n";
}

// Sanitized builds run SQLite's syscalls through interceptors at a fraction of the speed; keep them
// well inside the test time budget (their figures are meaningless anyway).
constexpr int kCreatesPerThread = ::tpuemu::testing::kSanitizedBuild ? 300 : 5000;

TEST(ThroughputTest, OneThread) { RunCreates(1, kCreatesPerThread); }
TEST(ThroughputTest, FourThreads) { RunCreates(4, kCreatesPerThread); }

}  // namespace
}  // namespace tpuemu::db
