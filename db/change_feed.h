// ChangeFeed: a background receiver of the database's change notifications, for replicas that
// share one PostgreSQL database. Triggers call pg_notify(channel, payload) when rows change; the
// feed LISTENs on a few channels and hands each notification it hears to a callback.
//
// Threads: the feed owns one thread (and, on PostgreSQL, its own connection, not the Store's).
// Callbacks run on that thread, one at a time, in the order the server delivered the
// notifications (for one sender: its commit order), and must not block long: the next
// notification waits for them. Stop() and the destructor may be called from any thread but a
// callback's.
//
// Delivery: at most once. PostgreSQL delivers a notification only when the sending transaction
// commits (none for a rollback), folds identical (channel, payload) pairs sent in one transaction
// into one, and keeps nothing for a listener that is not connected: after a lost connection the
// feed reconnects (backoff 100 ms doubling to 2 s), LISTENs again and then calls OnResync, whose
// consumer re-reads whatever it caches.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpuemu::db {

// One notification: the channel it was sent on and its payload (text, at most 8000 bytes by
// PostgreSQL's default; "" when the sender gave none).
struct Change {
  std::string channel;
  std::string payload;

  friend bool operator==(const Change&, const Change&) = default;
};

class ChangeFeed {
 public:
  using OnChange = std::function<void(const Change&)>;
  // Called after the feed reconnected and LISTENs again: notifications sent while it was
  // disconnected are lost, so the consumer re-reads what it caches. Not called after the first
  // connection (nothing was missed before the feed existed).
  using OnResync = std::function<void()>;

  ChangeFeed() = default;
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;
  virtual ~ChangeFeed() = default;  // implementations Stop()

  // Ends the feed: wakes its thread, joins it and closes its connection. Idempotent; no callback
  // runs after it returns. Must not be called from inside a callback (it would wait for itself).
  virtual void Stop() = 0;
};

// For a PostgreSQL location ("postgresql://..." or "postgres://...", as Store::Open accepts): a
// feed on its own connection and thread, LISTENing on `channels`, connected and listening when
// this returns. The connection's application_name is "tpuemu_feed" unless the URL sets one, so
// pg_stat_activity tells it apart. For any other location (SQLite: one process, nothing to hear):
// nullptr inside an OK Result.
//
// Errors: INVALID_ARGUMENT when `channels` is empty or holds a name that is not a plain lowercase
// identifier ([a-z_][a-z0-9_]*, at most 63 bytes), or `on_change` is empty (checked for every
// location); UNAVAILABLE when the server cannot be reached or refuses LISTEN within 10 s (the
// URL's connect_timeout does not apply). `on_resync` may be empty.
Result<std::unique_ptr<ChangeFeed>> OpenChangeFeed(const std::string& location,
                                                   std::vector<std::string> channels,
                                                   ChangeFeed::OnChange on_change,
                                                   ChangeFeed::OnResync on_resync);

}  // namespace tpuemu::db
