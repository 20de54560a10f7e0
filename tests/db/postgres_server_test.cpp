// The PostgreSQL test harness (tests/support/postgres_server.h): one private server per test
// process, a fresh database per CreateDatabase, databases independent of each other.
#include "tests/support/postgres_server.h"

#include <libpq-fe.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tpuemu::testing {
namespace {

struct ConnDeleter {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
using Conn = std::unique_ptr<PGconn, ConnDeleter>;

class PostgresServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  }

  static Conn Connect(const std::string& url) {
    Conn conn(PQconnectdb(url.c_str()));
    EXPECT_EQ(PQstatus(conn.get()), CONNECTION_OK) << url << ": " << PQerrorMessage(conn.get());
    return conn;
  }

  // The first column of the first row of `sql`'s result; "<null>" for NULL, "<error: ...>".
  static std::string Query(PGconn* conn, const std::string& sql) {
    PGresult* result = PQexec(conn, sql.c_str());
    std::string value;
    ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_TUPLES_OK && PQntuples(result) > 0) {
      value = PQgetisnull(result, 0, 0) ? "<null>" : PQgetvalue(result, 0, 0);
    } else if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      value = std::string("<error: ") + PQerrorMessage(conn) + ">";
    }
    PQclear(result);
    return value;
  }
};

TEST_F(PostgresServerTest, DatabasesAreFreshAndIndependent) {
  PostgresServer& server = PostgresServer::Shared();
  std::string a = server.CreateDatabase();
  std::string b = server.CreateDatabase();
  std::string prefix = "postgresql://tpuemu@127.0.0.1:" + std::to_string(server.port()) + "/";
  EXPECT_EQ(a.rfind(prefix, 0), 0u) << a;
  EXPECT_EQ(b.rfind(prefix, 0), 0u) << b;
  ASSERT_NE(a, b);

  Conn in_a = Connect(a);
  Conn in_b = Connect(b);
  ASSERT_EQ(PQstatus(in_a.get()), CONNECTION_OK);
  ASSERT_EQ(PQstatus(in_b.get()), CONNECTION_OK);
  EXPECT_EQ(Query(in_a.get(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), "0");
  EXPECT_EQ(Query(in_a.get(), "CREATE TABLE nodes (name TEXT PRIMARY KEY, state TEXT)"), "");
  EXPECT_EQ(Query(in_a.get(), "INSERT INTO nodes VALUES ('n1', 'READY')"), "");
  EXPECT_EQ(Query(in_a.get(), "SELECT state FROM nodes WHERE name = 'n1'"), "READY");
  EXPECT_EQ(Query(in_a.get(), "SELECT to_regclass('public.nodes')::text"), "nodes");
  EXPECT_EQ(Query(in_b.get(), "SELECT to_regclass('public.nodes')::text"), "<null>");
  EXPECT_EQ(Query(in_a.get(), "SHOW server_encoding"), "UTF8");
}

TEST_F(PostgresServerTest, OneServerServesManyDatabasesWithoutRestart) {
  PostgresServer& server = PostgresServer::Shared();
  EXPECT_EQ(&PostgresServer::Shared(), &server);
  Conn first = Connect(server.CreateDatabase());
  ASSERT_EQ(PQstatus(first.get()), CONNECTION_OK);
  std::string started = Query(first.get(), "SELECT pg_postmaster_start_time()::text");

  // Concurrent test code may create databases from several threads.
  std::vector<std::string> urls(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 8; i += 4) urls[i] = server.CreateDatabase();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(std::set<std::string>(urls.begin(), urls.end()).size(), urls.size());
  for (const std::string& url : urls) {
    Conn conn = Connect(url);
    EXPECT_EQ(Query(conn.get(), "SELECT pg_postmaster_start_time()::text"), started) << url;
  }
  // The first connection survived all of that: same server, never restarted.
  EXPECT_EQ(Query(first.get(), "SELECT pg_postmaster_start_time()::text"), started);
  EXPECT_EQ(server.port(), PostgresServer::Shared().port());
}

TEST_F(PostgresServerTest, ServerIsPrivateToThisProcess) {
  PostgresServer& server = PostgresServer::Shared();
  Conn conn = Connect(server.CreateDatabase());
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
  // Its socket and data live in the harness's temp dir, never /var/run/postgresql.
  EXPECT_EQ(Query(conn.get(), "SHOW unix_socket_directories"), server.dir().string());
  EXPECT_EQ(Query(conn.get(), "SHOW data_directory"), (server.dir() / "data").string());
  EXPECT_EQ(Query(conn.get(), "SHOW listen_addresses"), "127.0.0.1");
  EXPECT_EQ(Query(conn.get(), "SELECT current_user"), "tpuemu");
}

}  // namespace
}  // namespace tpuemu::testing
