// PostgresServer: a private PostgreSQL server for tests, run from the binaries of Debian's
// `postgresql` package (/usr/lib/postgresql/<major>/bin) in a fresh temp dir, listening on
// 127.0.0.1 on a free port and on a unix socket inside that dir (never /var/run/postgresql). Trust
// auth, superuser `tpuemu`, UTF8, locale C; fsync off (a crash loses nothing a test needs) unless
// TPUEMU_POSTGRES_DURABLE=1 (benchmarks: PostgreSQL's defaults, every commit flushed).
//
// PostgreSQL refuses to run as root: when this process is root (CI), initdb and the server run as
// `nobody`, which then owns the temp dir. The server is this process's child and gets SIGQUIT
// (PostgreSQL's immediate shutdown) if this process dies, so a killed test leaves no server behind
// (only its temp dir); that holds when Shared() is first called on the main thread (a test body),
// since Linux sends that signal when the forking thread ends.
//
// initdb costs ~1 s and ctest runs each test case in its own process, so the first run keeps a
// pristine initdb result in $TMPDIR/tpuemu-postgres-templates-<euid>/ (owned by this user, mode
// 0700) and later servers start from a copy of it (~0.05 s).
//
//   if (auto why = PostgresServer::UnavailableReason(); !why.empty()) GTEST_SKIP() << why;
//   std::string url = PostgresServer::Shared().CreateDatabase();  // a fresh, empty database
#pragma once

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "base/status.h"

namespace tpuemu::testing {

class PostgresServer {
 public:
  // Empty when a server can run here; otherwise a sentence saying what is missing (the Debian
  // package `postgresql`, or the user `nobody` when running as root).
  static std::string UnavailableReason();

  // The process-wide server, started on first use and stopped (immediate shutdown, temp dir
  // removed) at process exit. If it cannot start, prints why with the tail of initdb's or the
  // server's log and aborts the process. Thread-safe.
  static PostgresServer& Shared();

  // Creates a fresh, uniquely named, empty database and returns its URL,
  // postgresql://tpuemu@127.0.0.1:PORT/NAME. Aborts (printing the server's error) on failure.
  // Thread-safe.
  std::string CreateDatabase();

  std::string Url(const std::string& database) const;
  int port() const { return port_; }
  const std::filesystem::path& dir() const { return dir_; }  // data/, logs and the unix socket

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

 private:
  PostgresServer() = default;
  ~PostgresServer();

  Status Start();
  Status PrepareDataDir(bool* from_template);
  Status Launch();
  void Stop();
  std::string Conninfo(const std::string& database) const;

  std::filesystem::path bin_dir_;  // /usr/lib/postgresql/<major>/bin
  std::filesystem::path dir_;      // the temp dir: data/, initdb.log, server.log, the socket
  uid_t uid_ = 0;                  // the user initdb and the server run as
  gid_t gid_ = 0;
  pid_t owner_pid_ = 0;  // only this process (not a fork of it) stops the server
  pid_t pid_ = -1;       // the postmaster, -1 when not running
  int port_ = 0;
  std::atomic<int> next_database_{0};
};

}  // namespace tpuemu::testing
