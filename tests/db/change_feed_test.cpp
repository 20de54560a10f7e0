// The change feed (db/change_feed.h) through OpenChangeFeed: argument checks and the SQLite case
// without a server, then a real one (tests/support/postgres_server.h): notifications sent by
// another connection arrive in order with their channel and payload, only for the channels
// listened to and only once committed; a feed whose session the server ended reconnects and
// resyncs; Stop() is prompt in every state.
#include "db/change_feed.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "db/store.h"
#include "tests/support/postgres_server.h"
#include "tests/support/wait_for.h"

namespace tpuemu::db {
namespace {

using ::tpuemu::testing::PostgresServer;
using ::tpuemu::testing::WaitFor;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kDeadline{10};

// What the feed's callbacks saw, and on which thread.
class Recorder {
 public:
  ChangeFeed::OnChange OnChange() {
    return [this](const Change& change) {
      std::lock_guard<std::mutex> lock(mu_);
      changes_.push_back(change);
      threads_.push_back(std::this_thread::get_id());
      changed_.notify_all();
    };
  }
  ChangeFeed::OnResync OnResync() {
    return [this] {
      std::lock_guard<std::mutex> lock(mu_);
      ++resyncs_;
      changed_.notify_all();
    };
  }
  // True once at least `count` changes arrived (bounded wait).
  bool WaitForChanges(size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kDeadline, [&] { return changes_.size() >= count; });
  }
  bool WaitForResyncs(int count) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kDeadline, [&] { return resyncs_ >= count; });
  }
  std::vector<Change> changes() {
    std::lock_guard<std::mutex> lock(mu_);
    return changes_;
  }
  std::vector<std::thread::id> threads() {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_;
  }
  int resyncs() {
    std::lock_guard<std::mutex> lock(mu_);
    return resyncs_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Change> changes_;           // guarded by mu_
  std::vector<std::thread::id> threads_;  // guarded by mu_: the thread each change ran on
  int resyncs_ = 0;                       // guarded by mu_
};

Status OpenStatus(const std::string& location, std::vector<std::string> channels) {
  Recorder recorder;
  return OpenChangeFeed(location, std::move(channels), recorder.OnChange(), recorder.OnResync())
      .status();
}

TEST(ChangeFeedTest, SqliteLocationsHaveNoFeed) {
  Recorder recorder;
  for (const std::string location : {":memory:", "data/tpuemu.db"}) {
    Result<std::unique_ptr<ChangeFeed>> feed =
        OpenChangeFeed(location, {"tpuemu_a"}, recorder.OnChange(), recorder.OnResync());
    ASSERT_TRUE(feed.ok()) << location << ": " << feed.status().ToString();
    EXPECT_EQ(*feed, nullptr) << location;
  }
}

TEST(ChangeFeedTest, ChannelsMustBePlainLowercaseIdentifiersOnEveryBackend) {
  // Checked before any connection: the unreachable URL is never tried.
  for (const std::string location : {":memory:", "postgresql://tpuemu@127.0.0.1:1/x"}) {
    for (const std::string& bad :
         std::vector<std::string>{"", "Tpuemu_a", "tpuemu-a", "1tpuemu", "tpuemu a", "tpuemu\"a",
                                  std::string(64, 'a')}) {
      Status status = OpenStatus(location, {"tpuemu_a", bad});
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << "'" << bad << "': " << location;
    }
    EXPECT_EQ(OpenStatus(location, {}).code(), StatusCode::kInvalidArgument) << location;
    EXPECT_EQ(OpenChangeFeed(location, {"tpuemu_a"}, nullptr, nullptr).status().code(),
              StatusCode::kInvalidArgument)
        << location;
  }
  EXPECT_TRUE(OpenStatus(":memory:", {"_a", std::string(63, 'z'), "tpuemu_9"}).ok());
}

TEST(ChangeFeedTest, AnUnreachableServerIsUnavailableAndItsPasswordStaysHidden) {
  Status status = OpenStatus("postgresql://tpuemu:s3cret@127.0.0.1:1/x", {"tpuemu_a"});
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_NE(status.message().find("postgresql://tpuemu:***@127.0.0.1:1/x"), std::string::npos)
      << status.ToString();
  EXPECT_EQ(status.message().find("s3cret"), std::string::npos) << status.ToString();
}

class PgChangeFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) GTEST_SKIP() << why;
    url_ = PostgresServer::Shared().CreateDatabase();
    Result<std::unique_ptr<Store>> sender = Store::Open(url_);
    ASSERT_TRUE(sender.ok()) << sender.status().ToString();
    sender_ = std::move(sender).value();
    Result<std::unique_ptr<ChangeFeed>> feed =
        OpenChangeFeed(url_, {"tpuemu_a", "tpuemu_b"}, recorder_.OnChange(), recorder_.OnResync());
    ASSERT_TRUE(feed.ok()) << feed.status().ToString();
    ASSERT_NE(*feed, nullptr);
    feed_ = std::move(feed).value();
  }
  void TearDown() override {
    if (feed_ != nullptr) feed_->Stop();
  }

  // Sends `changes` in one transaction from the sender's connection; rolls it back instead of
  // committing when `commit` is false.
  Status Notify(const std::vector<Change>& changes, bool commit = true) {
    return sender_->Transaction([&](Txn& txn) -> Status {
      for (const Change& change : changes) {
        Result<Statement*> notify = txn.Prepare("SELECT pg_notify(?1, ?2)");
        if (!notify.ok()) return notify.status();
        (*notify)->Bind(1, change.channel).Bind(2, change.payload);
        Result<bool> row = (*notify)->Step();
        if (!row.ok()) return row.status();
      }
      return commit ? Status::Ok() : Status::Aborted("rolled back on purpose");
    });
  }
  // Runs `sql` on the sender's connection: the first column of its first row.
  Result<int64_t> QueryInt(const std::string& sql) {
    int64_t value = 0;
    Status status = sender_->Transaction([&](Txn& txn) -> Status {
      Result<Statement*> query = txn.Prepare(sql);
      if (!query.ok()) return query.status();
      Result<bool> row = (*query)->Step();
      if (!row.ok()) return row.status();
      value = *row ? (*query)->ColumnInt64(0) : 0;
      return Status::Ok();
    });
    if (!status.ok()) return status;
    return value;
  }
  // Ends the feed's server session, as a server restart or a network cut would: how many ended.
  Result<int64_t> TerminateFeedSessions() {
    // Materialized first: in one WHERE clause the server may call pg_terminate_backend before it
    // checks the name, and end every session (the sender's too).
    return QueryInt(
        "WITH feed AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE datname = "
        "current_database() AND application_name = 'tpuemu_feed' AND pid <> pg_backend_pid()) "
        "SELECT count(*) FROM feed WHERE pg_terminate_backend(pid)");
  }
  // The feed's sessions on the server (-1 if the question fails).
  int64_t FeedSessions() {
    Result<int64_t> sessions = QueryInt(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
        "application_name = 'tpuemu_feed'");
    return sessions.ok() ? *sessions : -1;
  }
  std::string DatabaseName() const { return url_.substr(url_.rfind('/') + 1); }
  // How often the server refused a connection to this test's database (its log says so).
  int RefusedConnections() const {
    std::ifstream log(PostgresServer::Shared().dir() / "server.log");
    std::stringstream text;
    text << log.rdbuf();
    const std::string needle =
        "database \"" + DatabaseName() + "\" is not currently accepting connections";
    int count = 0;
    for (size_t at = text.str().find(needle); at != std::string::npos;
         at = text.str().find(needle, at + 1)) {
      ++count;
    }
    return count;
  }
  // PostgreSQL refuses to shut the current database, so this speaks from the "postgres" one.
  void AllowConnections(bool allow) {
    PGconn* admin = PQconnectdb(PostgresServer::Shared().Url("postgres").c_str());
    PGresult* result = PQexec(admin, ("ALTER DATABASE \"" + DatabaseName() +
                                      "\" ALLOW_CONNECTIONS " + (allow ? "true" : "false"))
                                         .c_str());
    const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    const std::string error = PQerrorMessage(admin);
    PQclear(result);
    PQfinish(admin);
    ASSERT_TRUE(ok) << error;
  }

  std::string url_;
  std::unique_ptr<Store> sender_;
  Recorder recorder_;
  std::unique_ptr<ChangeFeed> feed_;
};

TEST_F(PgChangeFeedTest, DeliversEachNotificationWithItsChannelAndPayloadInCommitOrder) {
  ASSERT_TRUE(Notify({{"tpuemu_a", "x1"}}).ok());
  ASSERT_TRUE(Notify({{"tpuemu_b", "x2"}, {"tpuemu_a", "x3"}, {"tpuemu_b", ""}}).ok());
  ASSERT_TRUE(Notify({{"tpuemu_a", "{\"name\":\"n1\",\"op\":\"UPDATE\"}"}}).ok());
  ASSERT_TRUE(recorder_.WaitForChanges(5));
  EXPECT_EQ(recorder_.changes(),
            (std::vector<Change>{{"tpuemu_a", "x1"},
                                 {"tpuemu_b", "x2"},
                                 {"tpuemu_a", "x3"},
                                 {"tpuemu_b", ""},
                                 {"tpuemu_a", "{\"name\":\"n1\",\"op\":\"UPDATE\"}"}}));
  // All on the feed's own thread.
  std::vector<std::thread::id> threads = recorder_.threads();
  EXPECT_NE(threads.front(), std::this_thread::get_id());
  for (std::thread::id thread : threads) EXPECT_EQ(thread, threads.front());
  EXPECT_EQ(recorder_.resyncs(), 0);
}

TEST_F(PgChangeFeedTest, HearsOnlyTheChannelsItListensOn) {
  // Commit order is delivery order: had "tpuemu_c" been heard, it would come before "after".
  ASSERT_TRUE(Notify({{"tpuemu_c", "unheard"}}).ok());
  ASSERT_TRUE(Notify({{"TPUEMU_A", "unheard"}}).ok());  // pg_notify's channel is case-sensitive
  ASSERT_TRUE(Notify({{"tpuemu_a", "after"}}).ok());
  ASSERT_TRUE(recorder_.WaitForChanges(1));
  EXPECT_EQ(recorder_.changes(), (std::vector<Change>{{"tpuemu_a", "after"}}));
}

TEST_F(PgChangeFeedTest, ARolledBackTransactionNotifiesNobody) {
  ASSERT_EQ(
      Notify({{"tpuemu_a", "rolled back"}, {"tpuemu_b", "rolled back"}}, /*commit=*/false).code(),
      StatusCode::kAborted);
  ASSERT_TRUE(Notify({{"tpuemu_b", "committed"}}).ok());
  ASSERT_TRUE(recorder_.WaitForChanges(1));
  EXPECT_EQ(recorder_.changes(), (std::vector<Change>{{"tpuemu_b", "committed"}}));
}

TEST_F(PgChangeFeedTest, OneTransactionsIdenticalNotificationsArriveOnce) {
  ASSERT_TRUE(
      Notify(
          {{"tpuemu_a", "same"}, {"tpuemu_a", "other"}, {"tpuemu_a", "same"}, {"tpuemu_b", "same"}})
          .ok());
  ASSERT_TRUE(Notify({{"tpuemu_a", "same"}}).ok());  // another transaction: delivered again
  ASSERT_TRUE(recorder_.WaitForChanges(4));
  EXPECT_EQ(recorder_.changes(), (std::vector<Change>{{"tpuemu_a", "same"},
                                                      {"tpuemu_a", "other"},
                                                      {"tpuemu_b", "same"},
                                                      {"tpuemu_a", "same"}}));
}

TEST_F(PgChangeFeedTest, ReconnectsAfterTheServerEndsItsSessionThenResyncs) {
  ASSERT_TRUE(Notify({{"tpuemu_a", "before"}}).ok());
  ASSERT_TRUE(recorder_.WaitForChanges(1));
  Result<int64_t> ended = TerminateFeedSessions();
  ASSERT_TRUE(ended.ok()) << ended.status().ToString();
  ASSERT_EQ(*ended, 1);
  ASSERT_TRUE(recorder_.WaitForResyncs(1));
  // OnResync runs once LISTEN is back, so what is sent from now on is heard.
  ASSERT_TRUE(Notify({{"tpuemu_b", "after"}}).ok());
  ASSERT_TRUE(recorder_.WaitForChanges(2));
  EXPECT_EQ(recorder_.changes(),
            (std::vector<Change>{{"tpuemu_a", "before"}, {"tpuemu_b", "after"}}));
  EXPECT_EQ(recorder_.resyncs(), 1);
}

TEST_F(PgChangeFeedTest, KeepsRetryingWhileTheServerRefusesItAndStopEndsTheBackoffPromptly) {
  ASSERT_NO_FATAL_FAILURE(AllowConnections(false));
  Result<int64_t> ended = TerminateFeedSessions();
  ASSERT_TRUE(ended.ok()) << ended.status().ToString();
  ASSERT_EQ(*ended, 1);
  // Refused again and again (backoff 100 ms, 200 ms, ...), never giving up.
  ASSERT_TRUE(WaitFor([&] { return RefusedConnections() >= 3; }, kDeadline))
      << "refused " << RefusedConnections() << " times";
  EXPECT_EQ(recorder_.resyncs(), 0);
  ASSERT_NO_FATAL_FAILURE(AllowConnections(true));
  ASSERT_TRUE(recorder_.WaitForResyncs(1));
  ASSERT_TRUE(Notify({{"tpuemu_a", "back"}}).ok());
  ASSERT_TRUE(recorder_.WaitForChanges(1));
  EXPECT_EQ(recorder_.changes(), (std::vector<Change>{{"tpuemu_a", "back"}}));

  // Refused again, then stopped while waiting out a backoff.
  ASSERT_NO_FATAL_FAILURE(AllowConnections(false));
  const int refused = RefusedConnections();
  ASSERT_TRUE(TerminateFeedSessions().ok());
  ASSERT_TRUE(WaitFor([&] { return RefusedConnections() > refused; }, kDeadline));
  const Clock::time_point start = Clock::now();
  feed_->Stop();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500));
  ASSERT_NO_FATAL_FAILURE(AllowConnections(true));
}

TEST_F(PgChangeFeedTest, StopIsPromptIdempotentAndEndsTheSession) {
  ASSERT_TRUE(WaitFor([&] { return FeedSessions() == 1; }, kDeadline));
  const Clock::time_point start = Clock::now();
  // Two threads at once, then again: one join, no race (TSan), nothing left running.
  std::thread other([&] { feed_->Stop(); });
  feed_->Stop();
  other.join();
  feed_->Stop();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500));
  ASSERT_TRUE(WaitFor([&] { return FeedSessions() == 0; }, kDeadline));
  // Sent after Stop(): no callback runs.
  ASSERT_TRUE(Notify({{"tpuemu_a", "too late"}}).ok());
  feed_.reset();
  EXPECT_TRUE(recorder_.changes().empty());
}

}  // namespace
}  // namespace tpuemu::db
