#include "db/change_feed.h"

#include <utility>

#include "db/postgres/pg_listener.h"
#include "db/store.h"

namespace tpuemu::db {
namespace {

// PostgreSQL's NAMEDATALEN - 1: longer identifiers are silently truncated by the server.
constexpr size_t kMaxChannelBytes = 63;

// Plain lowercase identifiers need no quoting and mean the same quoted or not, so the name a
// trigger passes to pg_notify() and the one LISTENed to cannot differ by case folding.
bool IsPlainChannel(const std::string& name) {
  if (name.empty() || name.size() > kMaxChannelBytes) return false;
  if (name[0] >= '0' && name[0] <= '9') return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<ChangeFeed>> OpenChangeFeed(const std::string& location,
                                                   std::vector<std::string> channels,
                                                   ChangeFeed::OnChange on_change,
                                                   ChangeFeed::OnResync on_resync) {
  if (channels.empty()) return Status::InvalidArgument("change feed: no channel to listen on");
  for (const std::string& channel : channels) {
    if (!IsPlainChannel(channel)) {
      return Status::InvalidArgument("change feed: channel '" + channel +
                                     "' is not a plain lowercase identifier ([a-z_][a-z0-9_]*, "
                                     "at most 63 bytes)");
    }
  }
  if (!on_change) return Status::InvalidArgument("change feed: on_change is empty");
  if (!IsPostgresUrl(location)) return std::unique_ptr<ChangeFeed>();

  Result<std::unique_ptr<postgres::PgListener>> listener = postgres::PgListener::Open(
      location, std::move(channels), std::move(on_change), std::move(on_resync));
  if (!listener.ok()) return listener.status();
  return std::unique_ptr<ChangeFeed>(std::move(listener).value());
}

}  // namespace tpuemu::db
