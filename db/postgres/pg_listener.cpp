#include "db/postgres/pg_listener.h"

#include <libpq-fe.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include "db/postgres/pg_connection.h"

namespace tpuemu::db::postgres {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{2000};

// libpq's and the server's messages on one log line: each run of whitespace holding a line
// break becomes one space, and the trailing line break goes.
std::string Trimmed(const char* message) {
  std::string text;
  bool pending_space = false;
  for (const char* c = message == nullptr ? "" : message; *c != '\0'; ++c) {
    if (*c == '\n' || ((*c == '\t' || *c == ' ') && pending_space)) {
      pending_space = true;
      continue;
    }
    if (pending_space && !text.empty()) text += ' ';
    pending_space = false;
    text += *c;
  }
  return text;
}

std::string ErrorText(const PGconn* conn) {
  std::string text = Trimmed(PQerrorMessage(conn));
  return text.empty() ? "connection lost" : text;
}

// An ErrorResponse that arrives while no query runs (the FATAL a terminated backend sends before
// closing) reaches libpq's notice processor, not a result: keep it to say why the connection
// went.
void KeepNotice(void* last_notice, const char* message) {
  *static_cast<std::string*>(last_notice) = Trimmed(message);
}

// Runs a callback on the feed's thread: an exception it throws is logged, not fatal to the feed.
template <typename F>
void RunCallback(const char* name, F&& callback) {
  try {
    callback();
  } catch (const std::exception& e) {
    spdlog::error("change feed: {} threw: {}", name, e.what());
  } catch (...) {
    spdlog::error("change feed: {} threw a non-std exception", name);
  }
}

}  // namespace

Result<std::unique_ptr<PgListener>> PgListener::Open(const std::string& url,
                                                     std::vector<std::string> channels,
                                                     OnChange on_change, OnResync on_resync) {
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    return Status::Internal(std::string("change feed: eventfd: ") + std::strerror(errno));
  }
  std::unique_ptr<PgListener> listener(new PgListener(
      url, std::move(channels), std::move(on_change), std::move(on_resync), wake_fd));
  Status connected = listener->ConnectAndListen();
  if (!connected.ok()) {
    return Status(connected.code(),
                  "change feed: open " + listener->shown_url_ + ": " + connected.message());
  }
  listener->thread_ = std::thread(&PgListener::Run, listener.get());
  return listener;
}

PgListener::PgListener(std::string url, std::vector<std::string> channels, OnChange on_change,
                       OnResync on_resync, int wake_fd)
    : url_(std::move(url)),
      shown_url_(WithoutPassword(url_)),
      channels_(std::move(channels)),
      on_change_(std::move(on_change)),
      on_resync_(std::move(on_resync)),
      wake_fd_(wake_fd) {}

PgListener::~PgListener() {
  Stop();
  CloseConnection();
  close(wake_fd_);
}

void PgListener::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (!thread_.joinable()) return;
  stopping_.store(true);
  // The eventfd stays readable (nobody reads it), so every later Wait() returns kStop too.
  const uint64_t one = 1;
  const ssize_t written = write(wake_fd_, &one, sizeof one);
  (void)written;  // cannot fail: the counter is far from overflowing and the fd is ours
  thread_.join();
}

void PgListener::Run() {
  Deliver();  // what libpq read along with LISTEN's results at open
  while (!stopping_.load()) {
    if (conn_ == nullptr) {
      if (!Reconnect()) break;
      RunCallback("on_resync", [this] {
        if (on_resync_) on_resync_();
      });
      Deliver();
      continue;
    }
    bool alive = PQstatus(conn_) == CONNECTION_OK;
    if (alive) {
      if (Wait(PQsocket(conn_), POLLIN, std::nullopt) == Wake::kStop) break;
      alive = PQconsumeInput(conn_) == 1 && PQstatus(conn_) == CONNECTION_OK;
      Deliver();  // what was read before the connection broke was sent and committed: deliver it
    }
    if (!alive) {
      // The server's own FATAL, when it sent one, says more than libpq's "server closed ...".
      spdlog::warn("change feed: lost the connection to {}: {}; reconnecting", shown_url_,
                   last_notice_.empty() ? ErrorText(conn_) : last_notice_);
      CloseConnection();
    }
  }
  CloseConnection();
}

PgListener::Wake PgListener::Wait(int fd, short events, Deadline deadline) const {
  for (;;) {
    int timeout_ms = -1;
    if (deadline.has_value()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT_MAX));
    }
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {fd, events, 0}};
    const int ready = poll(fds, fd >= 0 ? 2 : 1, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      // ENOMEM and the like: transient; pause rather than spin.
      spdlog::error("change feed: poll: {}", std::strerror(errno));
      if (Wait(-1, 0, std::chrono::steady_clock::now() + kFirstBackoff) == Wake::kStop) {
        return Wake::kStop;
      }
      continue;
    }
    if (fds[0].revents != 0) return Wake::kStop;
    if (ready == 0) return Wake::kTimeout;
    return Wake::kReady;  // readable, writable, or an error/hang-up libpq will report
  }
}

Status PgListener::ConnectAndListen() {
  const Deadline deadline = std::chrono::steady_clock::now() + kAttemptTimeout;
  Status status = Connect(deadline);
  if (status.ok()) status = Listen(deadline);
  if (!status.ok()) CloseConnection();
  return status;
}

Status PgListener::Connect(Deadline deadline) {
  last_notice_.clear();
  // Defaults first: with expand_dbname, what the URL (dbname) sets overrides the keywords before
  // it.
  const char* const keywords[] = {
      "fallback_application_name", "keepalives_idle", "keepalives_interval",
      "keepalives_count",          "dbname",          nullptr};
  const char* const values[] = {kApplicationName, "30", "10", "3", url_.c_str(), nullptr};
  conn_ = PQconnectStartParams(keywords, values, /*expand_dbname=*/1);
  if (conn_ == nullptr) return Status::Internal("libpq is out of memory");
  PQsetNoticeProcessor(conn_, KeepNotice, &last_notice_);
  if (PQstatus(conn_) == CONNECTION_BAD) {
    return Status::Unavailable("database unreachable: " + ErrorText(conn_));
  }
  // libpq's protocol: behave as if PQconnectPoll had said WRITING, then wait for what it asks.
  PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
  for (;;) {
    if (polling == PGRES_POLLING_OK) return Status::Ok();
    if (polling == PGRES_POLLING_FAILED) {
      return Status::Unavailable("database unreachable: " + ErrorText(conn_));
    }
    if (polling == PGRES_POLLING_READING || polling == PGRES_POLLING_WRITING) {
      const short events = polling == PGRES_POLLING_READING ? POLLIN : POLLOUT;
      const Wake wake = Wait(PQsocket(conn_), events, deadline);
      if (wake == Wake::kStop) return Status::Cancelled("stopped while connecting");
      if (wake == Wake::kTimeout) {
        return Status::Unavailable("database unreachable: no connection within " +
                                   std::to_string(kAttemptTimeout.count()) + " s");
      }
    }
    polling = PQconnectPoll(conn_);
  }
}

Status PgListener::Listen(Deadline deadline) {
  std::string sql;
  for (const std::string& channel : channels_) sql += "LISTEN \"" + channel + "\";";
  if (PQsendQuery(conn_, sql.c_str()) != 1) {
    return Status::Unavailable("database unreachable: LISTEN: " + ErrorText(conn_));
  }
  Status status;
  for (;;) {
    while (PQisBusy(conn_) == 1) {
      const Wake wake = Wait(PQsocket(conn_), POLLIN, deadline);
      if (wake == Wake::kStop) return Status::Cancelled("stopped while sending LISTEN");
      if (wake == Wake::kTimeout) {
        return Status::Unavailable("database unreachable: no answer to LISTEN within " +
                                   std::to_string(kAttemptTimeout.count()) + " s");
      }
      if (PQconsumeInput(conn_) != 1) {
        return Status::Unavailable("database unreachable: LISTEN: " + ErrorText(conn_));
      }
    }
    PGresult* result = PQgetResult(conn_);
    if (result == nullptr) return status;
    if (PQresultStatus(result) != PGRES_COMMAND_OK && status.ok()) {
      status = Status::Unavailable("LISTEN refused: " + Trimmed(PQresultErrorMessage(result)));
    }
    PQclear(result);
  }
}

bool PgListener::Reconnect() {
  std::chrono::milliseconds backoff = kFirstBackoff;
  bool logged = false;
  for (;;) {
    if (Wait(-1, 0, std::chrono::steady_clock::now() + backoff) == Wake::kStop) return false;
    Status status = ConnectAndListen();
    if (status.ok()) {
      spdlog::info("change feed: reconnected to {}, listening again", shown_url_);
      return true;
    }
    if (status.code() == StatusCode::kCancelled) return false;
    if (!logged) {
      spdlog::warn(
          "change feed: cannot reconnect to {} yet ({}); retrying quietly, every {} ms "
          "at most",
          shown_url_, status.message(), kMaxBackoff.count());
      logged = true;
    }
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

void PgListener::Deliver() {
  while (conn_ != nullptr && !stopping_.load()) {
    PGnotify* notify = PQnotifies(conn_);
    if (notify == nullptr) return;
    Change change{notify->relname, notify->extra == nullptr ? "" : notify->extra};
    PQfreemem(notify);
    RunCallback("on_change", [&] { on_change_(change); });
  }
}

void PgListener::CloseConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

}  // namespace tpuemu::db::postgres
