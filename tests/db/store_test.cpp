#include "db/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "db/migrations.h"
#include "db/node_repository.h"
#include "db/operation_repository.h"
#include "db/statement_helpers.h"
#include "tests/db/rows.h"
#include "tests/db/temp_dir.h"

namespace tpuemu::db {
namespace {

using testing::MakeNode;
using testing::MakeOperation;
using testing::TempDir;

std::unique_ptr<Store> MustOpen(const std::string& path) {
  Result<std::unique_ptr<Store>> store = Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// Runs one SQL text on a raw connection, outside the Store (to fake other tools or versions).
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

int64_t CountRows(Store& store, const std::string& table) {
  int64_t count = -1;
  Status s = store.Read([&](Txn& txn) -> Status {
    Result<Statement*> stmt = txn.Prepare("SELECT COUNT(*) FROM " + table);
    if (!stmt.ok()) return stmt.status();
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    count = (*stmt)->ColumnInt64(0);
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return count;
}

TEST(StoreTest, FreshFileIsMigratedAndParentFoldersCreated) {
  TempDir dir;
  const std::string path = dir.File("a/b/tpuemu.db");
  auto store = MustOpen(path);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(std::filesystem::exists(path));
  Result<int> version = store->SchemaVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, LatestSchemaVersion());
  EXPECT_EQ(CountRows(*store, "nodes"), 0);
  EXPECT_EQ(CountRows(*store, "operations"), 0);
}

TEST(StoreTest, FileDatabaseUsesWalAndNormalSync) {
  TempDir dir;
  auto store = MustOpen(dir.File("x.db"));
  ASSERT_NE(store, nullptr);
  std::string mode;
  int64_t sync = -1, fk = -1, busy_ms = -1;
  // PRAGMAs do not count as read-only statements, so query them in a write transaction.
  Status status = store->Transaction([&](Txn& txn) -> Status {
    auto one = [&](const char* sql, auto fn) -> Status {
      Result<Statement*> s = txn.Prepare(sql);
      if (!s.ok()) return s.status();
      Result<bool> row = (*s)->Step();
      if (!row.ok()) return row.status();
      fn(**s);
      return Status::Ok();
    };
    TPUEMU_RETURN_IF_ERROR(
        one("PRAGMA journal_mode", [&](Statement& s) { mode = s.ColumnText(0); }));
    TPUEMU_RETURN_IF_ERROR(
        one("PRAGMA synchronous", [&](Statement& s) { sync = s.ColumnInt64(0); }));
    TPUEMU_RETURN_IF_ERROR(
        one("PRAGMA foreign_keys", [&](Statement& s) { fk = s.ColumnInt64(0); }));
    return one("PRAGMA busy_timeout", [&](Statement& s) { busy_ms = s.ColumnInt64(0); });
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(mode, "wal");
  EXPECT_EQ(sync, 1);  // NORMAL
  EXPECT_EQ(fk, 1);
  EXPECT_EQ(busy_ms, 5000);
}

TEST(StoreTest, ReopenIsIdempotentAndKeepsData) {
  TempDir dir;
  const std::string path = dir.File("tpuemu.db");
  {
    auto store = MustOpen(path);
    ASSERT_NE(store, nullptr);
    NodeRepository nodes(*store);
    ASSERT_TRUE(store
                    ->Transaction([&](Txn& txn) -> Status {
                      return nodes.Insert(txn, MakeNode("p", "z", "n1")).status();
                    })
                    .ok());
    ASSERT_TRUE(store->Close().ok());
    EXPECT_TRUE(store->Close().ok());  // idempotent
    EXPECT_EQ(store->Transaction([](Txn&) { return Status::Ok(); }).code(), StatusCode::kInternal);
  }
  for (int i = 0; i < 2; ++i) {
    auto store = MustOpen(path);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(*store->SchemaVersion(), LatestSchemaVersion());
    NodeRepository nodes(*store);
    Result<NodeRow> row = nodes.Get("projects/p/locations/z/nodes/n1");
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    EXPECT_EQ(row->uid, "uid-n1");
  }
}

TEST(StoreTest, NewerSchemaIsRefused) {
  TempDir dir;
  const std::string path = dir.File("tpuemu.db");
  { ASSERT_NE(MustOpen(path), nullptr); }
  RawExec(path, "PRAGMA user_version = 999");
  Result<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(store.status().message().find("database schema version 999 is newer than this "
                                          "tpuemud (" +
                                          std::to_string(LatestSchemaVersion()) + ")"),
            std::string::npos)
      << store.status().message();
}

TEST(StoreTest, NonDatabaseFileIsCorruption) {
  TempDir dir;
  const std::string path = dir.File("junk.db");
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(8192, 'x');
  }
  Result<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDataLoss) << store.status().ToString();
}

TEST(StoreTest, EmptyPathIsInvalid) {
  EXPECT_EQ(Store::Open("").status().code(), StatusCode::kInternal);
}

TEST(StoreTest, FailedMigrationLeavesPreviousVersion) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  sqlite3_extended_result_codes(db, 1);
  const Migration good[] = {{1, "CREATE TABLE a (x INTEGER);"}};
  const Migration bad[] = {{1, "CREATE TABLE a (x INTEGER);"},
                           {2, "CREATE TABLE b (y INTEGER); INSERT INTO nowhere VALUES (1);"}};
  ASSERT_TRUE(Migrate(db, good).ok());
  Status status = Migrate(db, bad);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("no such table: nowhere"), std::string::npos) << status.message();
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 1);
  sqlite3_finalize(stmt);
  // Table b was created by the failed script and must have been rolled back with it.
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'b'", -1, &stmt,
                               nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(StoreTest, MigrationListMustBeConsecutive) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  const Migration gap[] = {{1, "SELECT 1;"}, {3, "SELECT 1;"}};
  EXPECT_EQ(Migrate(db, gap).code(), StatusCode::kInternal);
  sqlite3_close(db);
}

TEST(StoreTest, BodyErrorRollsBackEverything) {
  auto store = MustOpen(":memory:");
  ASSERT_NE(store, nullptr);
  NodeRepository nodes(*store);
  OperationRepository ops(*store);
  Status status = store->Transaction([&](Txn& txn) -> Status {
    TPUEMU_RETURN_IF_ERROR(nodes.Insert(txn, MakeNode("p", "z", "n1")).status());
    TPUEMU_RETURN_IF_ERROR(ops.Insert(txn, MakeOperation("p", "z", "op1")).status());
    return Status::Internal("quota exceeded");
  });
  EXPECT_EQ(status, Status::Internal("quota exceeded"));
  EXPECT_EQ(CountRows(*store, "nodes"), 0);
  EXPECT_EQ(CountRows(*store, "operations"), 0);
  // The store is usable afterwards (no transaction left open).
  EXPECT_TRUE(store
                  ->Transaction([&](Txn& txn) {
                    return nodes.Insert(txn, MakeNode("p", "z", "n1")).status();
                  })
                  .ok());
  EXPECT_EQ(CountRows(*store, "nodes"), 1);
}

TEST(StoreTest, ThrowingBodyRollsBackAndReportsWhat) {
  auto store = MustOpen(":memory:");
  ASSERT_NE(store, nullptr);
  NodeRepository nodes(*store);
  Status status = store->Transaction([&](Txn& txn) -> Status {
    EXPECT_TRUE(nodes.Insert(txn, MakeNode("p", "z", "n1")).ok());
    throw std::runtime_error("json parse failed");
  });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("json parse failed"), std::string::npos);
  EXPECT_EQ(CountRows(*store, "nodes"), 0);
}

TEST(StoreTest, NestingAndWritesInReadAreRefused) {
  auto store = MustOpen(":memory:");
  ASSERT_NE(store, nullptr);
  Status inner;
  ASSERT_TRUE(store
                  ->Transaction([&](Txn&) {
                    inner = store->Read([](Txn&) { return Status::Ok(); });
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(inner.code(), StatusCode::kInternal);

  Status write =
      store->Read([](Txn& txn) -> Status { return txn.Prepare("DELETE FROM nodes").status(); });
  EXPECT_EQ(write.code(), StatusCode::kInternal);
}

TEST(StoreTest, WaitForBusyConnectionIsBounded) {
  auto store = MustOpen(":memory:");
  ASSERT_NE(store, nullptr);
  std::mutex mu;
  std::condition_variable cv;
  bool holding = false, release = false;
  std::thread writer([&] {
    Status s = store->Transaction([&](Txn&) {
      std::unique_lock<std::mutex> lock(mu);
      holding = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return holding; }));
  }
  // The writer holds the connection past kBusyTimeout: the reader gives up with kBusy.
  EXPECT_EQ(NodeRepository(*store).Get("projects/p/locations/z/nodes/n").status().code(),
            StatusCode::kUnavailable);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  writer.join();
  EXPECT_EQ(NodeRepository(*store).Get("projects/p/locations/z/nodes/n").status().code(),
            StatusCode::kNotFound);
}

TEST(StoreTest, PrepareErrorsAreReported) {
  auto store = MustOpen(":memory:");
  ASSERT_NE(store, nullptr);
  Status status =
      store->Read([](Txn& txn) { return txn.Prepare("SELECT * FROM no_such_table").status(); });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("no such table"), std::string::npos);
  status = store->Read([](Txn& txn) { return txn.Prepare("SELECT 1; SELECT 2").status(); });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
}

// db/statement_helpers.h: the prepare error reaches the caller, and an INSERT ... RETURNING seq
// gives its seq, names a taken key, or says that nothing came back.
TEST(StoreTest, PrepareOrReturnAndInsertReturningSeq) {
  auto store = MustOpen(":memory:");
  ASSERT_NE(store, nullptr);
  Status status = store->Read([](Txn& txn) -> Status {
    TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("SELECT * FROM no_such_table"));
    return stmt.Run();
  });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("no such table"), std::string::npos);

  auto insert = [&](const std::string& name, std::string_view kind) {
    Result<int64_t> seq = Status::Internal("not run");
    Status s = store->Transaction([&](Txn& txn) -> Status {
      TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("INSERT INTO t (name) VALUES (?1) RETURNING seq"));
      stmt.Bind(1, name);
      seq = InsertReturningSeq(stmt, kind, name);
      return seq.status();
    });
    EXPECT_EQ(s.code(), seq.status().code());
    return seq;
  };
  ASSERT_TRUE(store
                  ->Transaction([](Txn& txn) {
                    return txn.ExecScript(
                        "CREATE TABLE t (seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)");
                  })
                  .ok());
  Result<int64_t> first = insert("a", "thing");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<int64_t> second = insert("b", "thing");
  ASSERT_TRUE(second.ok());
  EXPECT_GT(*second, *first);
  Result<int64_t> taken = insert("a", "thing");
  EXPECT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(taken.status().message(), "thing 'a' already exists");
  // Without a kind, the store's own ALREADY_EXISTS goes through as it is.
  Result<int64_t> unnamed = insert("a", "");
  EXPECT_EQ(unnamed.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(unnamed.status().message(), "thing 'a' already exists");

  status = store->Transaction([](Txn& txn) -> Status {
    TPUEMU_PREPARE_OR_RETURN(stmt,
                             txn.Prepare("INSERT INTO t (name) SELECT 'c' WHERE 0 RETURNING seq"));
    return InsertReturningSeq(stmt, "thing", "c").status();
  });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(), "insert: RETURNING produced no row");
}

TEST(StoreTest, WipeAllEmptiesTablesButSeqKeepsGrowing) {
  TempDir dir;
  auto store = MustOpen(dir.File("w.db"));
  ASSERT_NE(store, nullptr);
  NodeRepository nodes(*store);
  OperationRepository ops(*store);
  int64_t last_seq = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        store
            ->Transaction([&](Txn& txn) -> Status {
              Result<int64_t> seq = nodes.Insert(txn, MakeNode("p", "z", "n" + std::to_string(i)));
              if (!seq.ok()) return seq.status();
              last_seq = *seq;
              return ops.Insert(txn, MakeOperation("p", "z", "o" + std::to_string(i))).status();
            })
            .ok());
  }
  ASSERT_TRUE(store->WipeAll().ok());
  EXPECT_EQ(CountRows(*store, "nodes"), 0);
  EXPECT_EQ(CountRows(*store, "operations"), 0);
  EXPECT_EQ(nodes.Get("projects/p/locations/z/nodes/n0").status().code(), StatusCode::kNotFound);
  int64_t seq_after = 0;
  ASSERT_TRUE(store
                  ->Transaction([&](Txn& txn) -> Status {
                    Result<int64_t> seq = nodes.Insert(txn, MakeNode("p", "z", "n0"));
                    if (seq.ok()) seq_after = *seq;
                    return seq.status();
                  })
                  .ok());
  EXPECT_GT(seq_after, last_seq);
}

TEST(StoreTest, ConcurrentWritersFromFourThreads) {
  TempDir dir;
  auto store = MustOpen(dir.File("c.db"));
  ASSERT_NE(store, nullptr);
  NodeRepository nodes(*store);
  OperationRepository ops(*store);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
        Status s = store->Transaction([&](Txn& txn) -> Status {
          TPUEMU_RETURN_IF_ERROR(nodes.Insert(txn, MakeNode("p", "z", id)).status());
          return ops.Insert(txn, MakeOperation("p", "z", "op-" + id)).status();
        });
        if (!s.ok()) ++failures;
        // Interleave reads with the writers of other threads.
        if (!nodes.Get("projects/p/locations/z/nodes/" + id).ok()) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  Result<std::vector<NodeRow>> all = nodes.List("p", "-", 0, 0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), size_t{kThreads * kPerThread});
  for (size_t i = 1; i < all->size(); ++i) EXPECT_LT((*all)[i - 1].seq, (*all)[i].seq);
  EXPECT_EQ(CountRows(*store, "operations"), kThreads * kPerThread);
}

}  // namespace
}  // namespace tpuemu::db
