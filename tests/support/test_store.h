// TestStoreLocation(): where a test's store lives. SQLite's ":memory:" by default; with
// TPUEMU_TEST_STORE=postgresql (set by ctest for the suites it runs on both stores, the tests
// named pg.*), a fresh database on this process's private PostgreSQL server
// (tests/support/postgres_server.h), so the same test cases check both stores.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/support/postgres_server.h"

namespace tpuemu::testing {

inline bool TestStoreIsPostgres() {
  const char* store = std::getenv("TPUEMU_TEST_STORE");
  return store != nullptr && std::string_view(store) == "postgresql";
}

// `sqlite_location` (a file, or ":memory:") for SQLite runs; a fresh database's URL for PostgreSQL
// runs. Aborts the test process when PostgreSQL was asked for but cannot run here (the pg.* tests
// are only registered when CMake found the server binaries).
inline std::string TestStoreLocation(const std::string& sqlite_location = ":memory:") {
  if (!TestStoreIsPostgres()) return sqlite_location;
  return PostgresServer::Shared().CreateDatabase();
}

}  // namespace tpuemu::testing
