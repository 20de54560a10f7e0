// ReplicaSet: this tpuemud among the replicas that serve one store. Several tpuemud processes on
// one PostgreSQL database behave as one service; the database is where they meet — no replica
// knows another's address (docs/replicas.md).
//
// Membership: each replica has an id (--replica-id; by default host:port, so a restarted replica
// takes its own work back at once) and a row in `replicas` whose heartbeat it refreshes every
// heartbeat_ms, by the database's clock. A replica whose heartbeat is older than lease_ms is dead:
// the first replica to notice deletes its row, and every replica that sees a member vanish runs
// on_orphans — adoption (NodeManager::Adopt, JobManager::Adopt, …), whose conditional UPDATEs
// under the store's write lock give each orphan to exactly one replica. A replica that stops
// gracefully deletes its own row (Leave), so the others adopt its work without waiting out the
// lease. On PostgreSQL the id is also a session advisory lock: a second live process under the
// same id is refused at Join. SQLite is one process's: Join forgets every other row.
//
// The change feed (db/change_feed.h, PostgreSQL's LISTEN/NOTIFY) carries what other replicas
// commit — events, job and node changes, fault settings — to on_change, on the feed's thread;
// after a reconnect, on_resync (and on_tick) cover what was missed.
//
// Threads: Join/Start/Stop from one thread (App); List from any. The hooks run on the heartbeat
// thread (on_orphans, on_tick) and on the feed's thread (on_change, on_resync); they must not
// call Stop. The store is borrowed and must outlive this.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "db/change_feed.h"
#include "db/replica_repository.h"
#include "db/store.h"

namespace tpuemu::service {

struct ReplicaOptions {
  std::string id;       // empty: DefaultReplicaId
  std::string address;  // where this replica serves HTTP (shown by GET /_emulator/replicas)
  int64_t heartbeat_ms = 1000;
  int64_t lease_ms = 5000;  // a replica silent this long is dead; > 2 heartbeats
};

struct ReplicaHooks {
  std::function<void()> on_orphans;  // a replica died or left: adopt its work
  std::function<void()> on_tick;     // every heartbeat (retries what a lost notification missed)
  db::ChangeFeed::OnChange on_change;
  db::ChangeFeed::OnResync on_resync;
};

// "local" for a SQLite store (one process); else "<host>:<port>", or "<host>-<pid>" when the
// port is chosen by the system (0).
std::string DefaultReplicaId(const db::Store& store, int port);

class ReplicaSet {
 public:
  // `location` is the store's location as given (the feed opens its own connection to it).
  ReplicaSet(db::Store& store, std::string location, ReplicaOptions options);
  ~ReplicaSet();  // Stop()
  ReplicaSet(const ReplicaSet&) = delete;
  ReplicaSet& operator=(const ReplicaSet&) = delete;

  // Claims the id (FAILED_PRECONDITION when a live process holds it) and writes this replica's
  // row; on SQLite, deletes every other row first. On PostgreSQL, opens the heartbeat's own
  // connection.
  Status Join();
  // Opens the change feed and starts the heartbeat thread.
  Status Start(ReplicaHooks hooks);
  // Stops the feed and the heartbeat. Idempotent.
  void Stop();
  // Deletes this replica's row (a graceful leave: the others adopt its work at once rather than
  // after the lease). After Stop; idempotent.
  void Leave();
  // Where this replica serves, written at once (after Join).
  Status SetAddress(std::string address);
  // Tells the other replicas that this one wiped the store (POST /_emulator/reset): they forget
  // what they cache. A no-op on SQLite.
  Status AnnounceReset();

  const std::string& id() const { return options_.id; }
  // Whether this replica has the smallest id among the live ones at its last heartbeat: it does
  // the work one replica does for all (the utilization history). True on SQLite.
  bool leads() const { return leads_.load(); }
  bool shared() const { return store_.backend() == db::Backend::kPostgres; }
  // Every live replica and the database's clock at the read.
  Result<std::vector<db::ReplicaRow>> List(int64_t* now_ms) const;

 private:
  void Loop();
  // One heartbeat: refresh, expire the dead, and tell whether a member vanished.
  bool Beat();

  db::Store& store_;
  const std::string location_;
  ReplicaOptions options_;  // options_.address guarded by mu_ once the heartbeat runs
  // Where heartbeats go: a connection of this set's own on PostgreSQL (opened by Join), else the
  // serving store.
  std::unique_ptr<db::Store> beat_store_owned_;
  db::Store* beat_store_;
  std::unique_ptr<db::ReplicaRepository> replicas_;  // on *beat_store_
  ReplicaHooks hooks_;                               // set by Start, before the threads
  std::unique_ptr<db::ChangeFeed> feed_;             // null on SQLite
  std::set<std::string> members_;                    // seen at the last beat; heartbeat thread only
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  bool joined_ = false;
  std::atomic<bool> leads_{true};
  std::thread thread_;
};

}  // namespace tpuemu::service
