#include "service/replicas/replica_set.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <utility>

#include "db/change_payloads.h"

namespace tpuemu::service {

std::string DefaultReplicaId(const db::Store& store, int port) {
  if (store.backend() != db::Backend::kPostgres) return "local";
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
    std::snprintf(host, sizeof host, "tpuemud");
  if (port > 0) return std::string(host) + ":" + std::to_string(port);
  return std::string(host) + "-" + std::to_string(getpid());
}

ReplicaSet::ReplicaSet(db::Store& store, std::string location, ReplicaOptions options)
    : store_(store),
      location_(std::move(location)),
      options_(std::move(options)),
      beat_store_(&store),
      replicas_(std::make_unique<db::ReplicaRepository>(store)) {}

ReplicaSet::~ReplicaSet() {
  Stop();
}  // the App leaves explicitly (Leave) before it closes the store

Status ReplicaSet::Join() {
  TPUEMU_RETURN_IF_ERROR(store_.ClaimReplicaId(options_.id));
  if (shared()) {
    // Heartbeats on a connection of their own: a busy serving connection (every request and
    // write of this process shares it) must not make this replica look dead.
    Result<std::unique_ptr<db::Store>> own = db::Store::Open(location_);
    if (!own.ok()) return own.status();
    beat_store_owned_ = std::move(own).value();
    beat_store_ = beat_store_owned_.get();
    replicas_ = std::make_unique<db::ReplicaRepository>(*beat_store_);
  }
  TPUEMU_RETURN_IF_ERROR(beat_store_->Transaction([&](db::Txn& txn) -> Status {
    if (!shared()) TPUEMU_RETURN_IF_ERROR(replicas_->RemoveOthers(txn, options_.id));
    return replicas_->Beat(txn, options_.id, options_.address, /*starting=*/true);
  }));
  joined_ = true;
  Result<std::vector<db::ReplicaRow>> rows = replicas_->List();
  if (rows.ok()) {
    for (const db::ReplicaRow& row : *rows) members_.insert(row.id);
  }
  leads_ = members_.empty() || *members_.begin() == options_.id;
  return Status::Ok();
}

Status ReplicaSet::Start(ReplicaHooks hooks) {
  hooks_ = std::move(hooks);
  Result<std::unique_ptr<db::ChangeFeed>> feed = db::OpenChangeFeed(
      location_, {db::kEventsChannel, db::kJobsChannel, db::kNodesChannel, db::kSettingsChannel},
      [this](const db::Change& change) {
        if (hooks_.on_change) hooks_.on_change(change);
      },
      [this] {
        if (hooks_.on_resync) hooks_.on_resync();
      });
  if (!feed.ok()) return feed.status();
  feed_ = std::move(feed).value();
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void ReplicaSet::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (feed_) feed_->Stop();
}

void ReplicaSet::Leave() {
  Stop();
  if (joined_) {
    joined_ = false;
    // Gone at once rather than after the lease: the others adopt what this one leaves.
    Status left =
        beat_store_->Transaction([&](db::Txn& txn) { return replicas_->Remove(txn, options_.id); });
    if (!left.ok()) spdlog::warn("replica {}: could not leave: {}", options_.id, left.ToString());
  }
}

Status ReplicaSet::SetAddress(std::string address) {
  {
    std::lock_guard lock(mu_);
    options_.address = address;
  }
  return beat_store_->Transaction(
      [&](db::Txn& txn) { return replicas_->Beat(txn, options_.id, address, false); });
}

Status ReplicaSet::AnnounceReset() {
  if (!shared()) return Status::Ok();
  return store_.Transaction([&](db::Txn& txn) -> Status {
    Result<db::Statement*> stmt = txn.Prepare("SELECT pg_notify('tpuemu_settings', ?1)");
    if (!stmt.ok()) return stmt.status();
    return (*stmt)->Bind(1, db::SettingsResetPayload(options_.id)).Run();
  });
}

Result<std::vector<db::ReplicaRow>> ReplicaSet::List(int64_t* now_ms) const {
  return replicas_->List(now_ms);
}

bool ReplicaSet::Beat() {
  std::string address;
  {
    std::lock_guard lock(mu_);
    address = options_.address;
  }
  std::vector<std::string> expired;
  Status beat = beat_store_->Transaction([&](db::Txn& txn) -> Status {
    TPUEMU_RETURN_IF_ERROR(replicas_->Beat(txn, options_.id, address, false));
    Result<std::vector<std::string>> dead = replicas_->Expire(txn, options_.lease_ms);
    if (!dead.ok()) return dead.status();
    expired = std::move(dead).value();
    return Status::Ok();
  });
  if (!beat.ok()) {
    spdlog::warn("replica {}: heartbeat failed: {}", options_.id, beat.ToString());
    return false;
  }
  for (const std::string& id : expired) {
    spdlog::warn("replica {}: replica {} missed its heartbeats for {} ms; adopting its work",
                 options_.id, id, options_.lease_ms);
  }
  Result<std::vector<db::ReplicaRow>> rows = replicas_->List();
  if (!rows.ok()) return !expired.empty();
  std::set<std::string> now;
  for (const db::ReplicaRow& row : *rows) now.insert(row.id);
  bool vanished = !expired.empty();
  for (const std::string& id : members_) vanished = vanished || !now.contains(id);
  leads_ = now.empty() || *now.begin() == options_.id;
  members_ = std::move(now);
  return vanished;
}

void ReplicaSet::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait_for(lock, std::chrono::milliseconds(options_.heartbeat_ms), [&] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    const bool vanished = Beat();
    if (vanished && hooks_.on_orphans) hooks_.on_orphans();
    if (hooks_.on_tick) hooks_.on_tick();
    lock.lock();
  }
}

}  // namespace tpuemu::service
