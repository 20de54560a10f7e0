// The PostgreSQL store (db/postgres/): URL handling and parameter syntax as units, then a real
// server (tests/support/postgres_server.h): migrations, errors, a reset, reconnecting, value round
// trips. The repositories' own cases run on PostgreSQL as the pg.* tests of db_repository_tests.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "db/migrations.h"
#include "db/node_repository.h"
#include "db/postgres/pg_connection.h"
#include "db/postgres/pg_statement.h"
#include "db/store.h"
#include "tests/db/rows.h"
#include "tests/support/postgres_server.h"

namespace tpuemu::db {
namespace {

using testing::MakeNode;
using ::tpuemu::testing::PostgresServer;

TEST(PgSqlTest, QuestionParametersBecomeDollarParametersOutsideQuotes) {
  EXPECT_EQ(postgres::ToPostgresParameters("SELECT a FROM t WHERE b = ?1 AND c = '?2' AND \"?3\" "
                                           "= ?12"),
            "SELECT a FROM t WHERE b = $1 AND c = '?2' AND \"?3\" = $12");
  EXPECT_EQ(postgres::ToPostgresParameters("SELECT 'it''s ?1', ?2"), "SELECT 'it''s ?1', $2");
  EXPECT_EQ(postgres::MentionedParameters("WHERE a = ?1 AND b > ?3 LIMIT ?4"),
            (std::vector<bool>{true, false, true, true}));
}

TEST(PgSqlTest, PasswordsStayOutOfWhatIsShown) {
  EXPECT_EQ(postgres::WithoutPassword("postgresql://tpu:s3cret@db:5432/tpuemu"),
            "postgresql://tpu:***@db:5432/tpuemu");
  EXPECT_EQ(postgres::WithoutPassword("postgresql://db/tpuemu?password=s3cret&sslmode=disable"),
            "postgresql://db/tpuemu?password=***&sslmode=disable");
  EXPECT_EQ(postgres::WithoutPassword("postgresql://tpu@db/tpuemu"), "postgresql://tpu@db/tpuemu");
  EXPECT_EQ(Store::Describe("data/tpuemu.db"), "data/tpuemu.db");
}

TEST(PgStoreUnreachableTest, IsUnavailableAndNamesTheUrlWithoutThePassword) {
  Result<std::unique_ptr<Store>> store =
      Store::Open("postgresql://tpu:s3cret@127.0.0.1:1/tpuemu?connect_timeout=2");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable) << store.status().ToString();
  EXPECT_NE(store.status().message().find("postgresql://tpu:***@127.0.0.1:1"), std::string::npos)
      << store.status().ToString();
  EXPECT_EQ(store.status().message().find("s3cret"), std::string::npos);
}

class PgStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) GTEST_SKIP() << why;
    url_ = PostgresServer::Shared().CreateDatabase();
    store_ = Open();
  }
  std::unique_ptr<Store> Open() {
    Result<std::unique_ptr<Store>> store = Store::Open(url_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  Result<int64_t> InsertNode(Store& store, const std::string& id) {
    Result<int64_t> seq = Status::Internal("unset");
    Status status = store.Transaction([&](Txn& txn) {
      seq = NodeRepository(store).Insert(txn, MakeNode("p", "z", id));
      return seq.status();
    });
    if (!status.ok()) return status;
    return seq;
  }

  std::string url_;
  std::unique_ptr<Store> store_;
};

TEST_F(PgStoreTest, OpeningMigratesToTheLatestVersionOnceAndAgainIsANoOp) {
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(store_->backend(), Backend::kPostgres);
  EXPECT_EQ(store_->SchemaVersion().value(), LatestSchemaVersion());
  ASSERT_TRUE(InsertNode(*store_, "n1").ok());
  store_.reset();
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(store_->SchemaVersion().value(), LatestSchemaVersion());
  EXPECT_TRUE(NodeRepository(*store_).Get("projects/p/locations/z/nodes/n1").ok());
}

TEST_F(PgStoreTest, ReplicasOpeningAFreshDatabaseTogetherMigrateItOnce) {
  const std::string fresh = PostgresServer::Shared().CreateDatabase();
  std::vector<std::thread> threads;
  std::atomic<int> opened{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      Result<std::unique_ptr<Store>> store = Store::Open(fresh);
      EXPECT_TRUE(store.ok()) << store.status().ToString();
      if (store.ok() && (*store)->SchemaVersion().value() == LatestSchemaVersion()) ++opened;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(opened.load(), 4);
}

TEST_F(PgStoreTest, ASchemaNewerThanThisBuildIsRefused) {
  ASSERT_TRUE(store_
                  ->Transaction([](Txn& txn) {
                    return txn.ExecScript("UPDATE tpuemu_schema SET version = 999");
                  })
                  .ok());
  store_.reset();
  Result<std::unique_ptr<Store>> store = Store::Open(url_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(store.status().message().find("999 is newer"), std::string::npos)
      << store.status().ToString();
}

TEST_F(PgStoreTest, ADuplicateIsAlreadyExistsAndAFailedBodyWritesNothing) {
  ASSERT_TRUE(InsertNode(*store_, "dup").ok());
  Result<int64_t> again = InsertNode(*store_, "dup");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
  Status failed = store_->Transaction([&](Txn& txn) {
    EXPECT_TRUE(NodeRepository(*store_).Insert(txn, MakeNode("p", "z", "half")).ok());
    return Status::FailedPrecondition("changed my mind");
  });
  EXPECT_EQ(failed.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(NodeRepository(*store_).Get("projects/p/locations/z/nodes/half").status().code(),
            StatusCode::kNotFound);
  // The connection is usable after both failures.
  EXPECT_TRUE(InsertNode(*store_, "after").ok());
}

TEST_F(PgStoreTest, ReadRefusesAWritingStatement) {
  Status status = store_->Read(
      [](Txn& txn) { return txn.Prepare("DELETE FROM nodes WHERE project = ?1").status(); });
  EXPECT_FALSE(status.ok());
}

TEST_F(PgStoreTest, WipeAllEmptiesEveryTableAndSeqValuesNeverRepeat) {
  Result<int64_t> first = InsertNode(*store_, "a");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(store_->WipeAll().ok());
  EXPECT_EQ(NodeRepository(*store_).Get("projects/p/locations/z/nodes/a").status().code(),
            StatusCode::kNotFound);
  Result<int64_t> second = InsertNode(*store_, "a");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_GT(*second, *first);
  EXPECT_EQ(store_->SchemaVersion().value(), LatestSchemaVersion());
}

TEST_F(PgStoreTest, ValuesRoundTripExactly) {
  ASSERT_TRUE(store_
                  ->Transaction([](Txn& txn) {
                    return txn.ExecScript(
                        "CREATE TABLE scratch (i BIGINT, r DOUBLE PRECISION, t TEXT)");
                  })
                  .ok());
  const int64_t big = std::numeric_limits<int64_t>::min();
  const double third = 1.0 / 3.0;
  const std::string text = "tpu \xE2\x9C\x93 'quoted' \"double\" ?1";
  ASSERT_TRUE(store_
                  ->Transaction([&](Txn& txn) -> Status {
                    Result<Statement*> insert =
                        txn.Prepare("INSERT INTO scratch (i, r, t) VALUES (?1, ?2, ?3)");
                    if (!insert.ok()) return insert.status();
                    (*insert)->Bind(1, big).BindReal(2, third).Bind(3, text);
                    TPUEMU_RETURN_IF_ERROR((*insert)->Run());
                    EXPECT_EQ(txn.Changes(), 1);
                    insert = txn.Prepare("INSERT INTO scratch (i, r, t) VALUES (?1, ?2, ?3)");
                    if (!insert.ok()) return insert.status();
                    (*insert)->BindNull(1).BindNull(2).BindNull(3);
                    return (*insert)->Run();
                  })
                  .ok());
  ASSERT_TRUE(store_
                  ->Read([&](Txn& txn) -> Status {
                    Result<Statement*> select =
                        txn.Prepare("SELECT i, r, t FROM scratch ORDER BY i NULLS LAST");
                    if (!select.ok()) return select.status();
                    Statement& s = **select;
                    EXPECT_TRUE(s.Step().value());
                    EXPECT_EQ(s.ColumnInt64(0), big);
                    EXPECT_EQ(s.ColumnReal(1), third);
                    EXPECT_EQ(s.ColumnText(2), text);
                    EXPECT_TRUE(s.Step().value());
                    EXPECT_TRUE(s.IsNull(0));
                    EXPECT_EQ(s.ColumnOptionalInt64(0), std::nullopt);
                    EXPECT_EQ(s.ColumnOptionalText(2), std::nullopt);
                    EXPECT_FALSE(s.Step().value());
                    return Status::Ok();
                  })
                  .ok());
  // PostgreSQL's text cannot hold NUL; refused rather than silently cut.
  Status nul = store_->Transaction([&](Txn& txn) -> Status {
    Result<Statement*> insert = txn.Prepare("INSERT INTO scratch (t) VALUES (?1)");
    if (!insert.ok()) return insert.status();
    (*insert)->Bind(1, std::string_view("a\0b", 3));
    return (*insert)->Run();
  });
  EXPECT_EQ(nul.code(), StatusCode::kInvalidArgument) << nul.ToString();
}

TEST_F(PgStoreTest, AConnectionTheServerDroppedIsReopenedAndItsStatementsPreparedAgain) {
  ASSERT_TRUE(InsertNode(*store_, "before").ok());
  // Another session ends this store's backend, as a server restart or a network cut would.
  std::unique_ptr<Store> other = Open();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other
                  ->Transaction([](Txn& txn) {
                    return txn.ExecScript(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
                        "current_database() AND pid <> pg_backend_pid()");
                  })
                  .ok());
  // The first call may find the connection dead (UNAVAILABLE, retryable); the next one works.
  Result<int64_t> after = InsertNode(*store_, "after");
  if (!after.ok()) {
    EXPECT_EQ(after.status().code(), StatusCode::kUnavailable) << after.status().ToString();
    after = InsertNode(*store_, "after");
  }
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE(NodeRepository(*store_).Get("projects/p/locations/z/nodes/before").ok());
  EXPECT_TRUE(NodeRepository(*other).Get("projects/p/locations/z/nodes/after").ok());
}

}  // namespace
}  // namespace tpuemu::db
