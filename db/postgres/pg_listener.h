// PgListener: the PostgreSQL ChangeFeed (db/change_feed.h) — LISTEN on a connection of its own,
// NOTIFY delivered to a callback. Open it through db::OpenChangeFeed, which checks the channels.
//
// Threads: one thread owns the connection. It poll()s the connection's socket and an eventfd that
// Stop() writes, so Stop() returns promptly whatever the thread is waiting for (a notification, a
// reconnect's backoff, a slow server). Every wait is a poll() with no spinning; libpq is only
// used non-blockingly on that thread (PQconnectStartParams/PQconnectPoll, PQsendQuery,
// PQconsumeInput), except that resolving a host name may block in getaddrinfo.
//
// A lost connection (PQconsumeInput fails, or the server closed it) is logged once, then reopened
// with a backoff of 100 ms doubling to 2 s; the first failed attempt is logged, the next ones are
// not, and success is logged. Logs and errors show the URL without its password (WithoutPassword).
// TCP keepalives (30 s idle, then 3 probes 10 s apart) notice a silent network cut unless the URL
// says otherwise.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "db/change_feed.h"

struct pg_conn;

namespace tpuemu::db::postgres {

class PgListener final : public ChangeFeed {
 public:
  // The connection's application_name when the URL sets none (pg_stat_activity shows it).
  static constexpr char kApplicationName[] = "tpuemu_feed";
  // The longest a connection attempt (connect, authenticate, LISTEN) may take.
  static constexpr std::chrono::seconds kAttemptTimeout{10};

  // Connects to `url`, LISTENs on `channels` (plain lowercase identifiers, already checked) and
  // starts the thread. kUnavailable when the server cannot be reached or LISTEN fails.
  static Result<std::unique_ptr<PgListener>> Open(const std::string& url,
                                                  std::vector<std::string> channels,
                                                  OnChange on_change, OnResync on_resync);
  ~PgListener() override;  // Stop()

  void Stop() override;

 private:
  enum class Wake { kReady, kTimeout, kStop };
  using Deadline = std::optional<std::chrono::steady_clock::time_point>;

  PgListener(std::string url, std::vector<std::string> channels, OnChange on_change,
             OnResync on_resync, int wake_fd);

  // The thread: waits for notifications and delivers them, reconnecting when the connection drops.
  void Run();
  // Waits until `fd` (ignored when negative) is ready for `events` (POLLIN/POLLOUT), the deadline
  // passes (none: no limit), or Stop() was called.
  Wake Wait(int fd, short events, Deadline deadline) const;
  // Opens conn_ and LISTENs on every channel, within kAttemptTimeout. kCancelled when Stop() was
  // called meanwhile; otherwise kUnavailable with the server's or libpq's message. conn_ is null
  // unless OK.
  Status ConnectAndListen();
  Status Connect(Deadline deadline);
  Status Listen(Deadline deadline);
  // Reconnects with a backoff until it works (true) or Stop() is called (false).
  bool Reconnect();
  // Hands every notification libpq has already read to on_change_, stopping early for Stop().
  void Deliver();
  void CloseConnection();

  const std::string url_;
  const std::string shown_url_;  // url_ without its password, for logs and errors
  const std::vector<std::string> channels_;
  const OnChange on_change_;
  const OnResync on_resync_;  // may be empty
  const int wake_fd_;         // eventfd, owned; readable once Stop() was called

  // Used by the opening thread, then only by thread_:
  pg_conn* conn_ = nullptr;  // owned; null while disconnected
  std::string last_notice_;  // the server's last unsolicited message on conn_ (libpq's notices)
  std::atomic<bool> stopping_{false};
  std::mutex stop_mu_;  // serialises Stop() calls (one join)
  std::thread thread_;  // guarded by stop_mu_ once started
};

}  // namespace tpuemu::db::postgres
