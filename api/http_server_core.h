// What HttpServer's listener and its sessions share: the options and callbacks, the IO contexts,
// and the connection accounting that max_connections and Stop's drain rely on. Internal to
// api/http_server.cpp and api/http_session.cpp (it carries Asio types).
//
// Ownership: the server and every session hold a shared_ptr, so a Responder kept by another thread
// keeps its session's io_context alive even after Stop returned.
// Threading: everything but `stopping`, `next_ioc` and the members guarded by `mu_` is fixed at
// construction and read from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "api/http_server.h"

namespace tpuemu::api::http_internal {

namespace net = boost::asio;

// A listener's own connection budget (HttpServer::AddListener with ListenerLimits): its sessions
// count here instead of against max_connections, in all and per peer address, so that one peer
// (a worker's long-polls) spends only its own share. Any thread.
class ListenerBudget {
 public:
  ListenerBudget(int max_total, int max_per_peer)
      : max_total_(max_total), max_per_peer_(max_per_peer) {}
  // Counts a connection from `peer` (an address without port); false, counting nothing, when
  // that would pass either cap.
  bool TryEnter(const std::string& peer) {
    std::lock_guard lock(mu_);
    int& mine = per_peer_[peer];
    if ((max_total_ > 0 && total_ >= max_total_) || (max_per_peer_ > 0 && mine >= max_per_peer_)) {
      if (mine == 0) per_peer_.erase(peer);
      return false;
    }
    ++mine;
    ++total_;
    return true;
  }
  void Leave(const std::string& peer) {
    std::lock_guard lock(mu_);
    auto it = per_peer_.find(peer);
    if (it != per_peer_.end() && --it->second <= 0) per_peer_.erase(it);
    --total_;
  }

 private:
  const int max_total_;
  const int max_per_peer_;
  std::mutex mu_;
  int total_ = 0;                                  // guarded by mu_
  std::unordered_map<std::string, int> per_peer_;  // guarded by mu_
};

struct ServerCore {
  // One io_context per IO thread (Beast's "io_context per CPU" layout): a session lives on one of
  // them, so a handler posted on its own thread never wakes another thread, as a shared
  // io_context's scheduler does on every post (a futex wake and a context switch per request).
  ServerCore(HttpServerOptions o, AsyncHandlerFn h, std::function<void(const AccessLogEntry&)> a)
      : options(std::move(o)), handler(std::move(h)), on_access(std::move(a)) {
    for (int i = 0; i < std::max(1, options.io_threads); ++i) {
      iocs.push_back(std::make_unique<net::io_context>(1));
    }
  }

  // The io_context for the next accepted connection (round-robin; the acceptor's strand only).
  net::io_context& NextIoContext() { return *iocs[next_ioc++ % iocs.size()]; }

  // Connection accounting: a session counted against max_connections enters in its constructor
  // and leaves in its destructor. Any thread.
  bool Full() const {
    std::lock_guard lock(mu_);
    return active_ >= options.max_connections;
  }
  void Enter() {
    std::lock_guard lock(mu_);
    ++active_;
  }
  void Leave() {
    std::lock_guard lock(mu_);
    --active_;
    drained_.notify_all();
  }
  int Active() const {
    std::lock_guard lock(mu_);
    return active_;
  }

  // Stop's drain: waits until no counted session is left or `deadline` passed, then refuses
  // further posts (PostUnlessDrained drops them).
  void DrainUntil(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    drained_.wait_until(lock, deadline, [&] { return active_ == 0; });
    accepting_posts_ = false;
  }

  // Posts `fn` to `executor` unless the drain is over. A handler posted once the IO threads are
  // gone would never run and would keep its session (and this core) alive in a cycle.
  template <class Fn>
  void PostUnlessDrained(const net::any_io_executor& executor, Fn&& fn) {
    std::lock_guard lock(mu_);
    if (accepting_posts_) net::post(executor, std::forward<Fn>(fn));
  }

  std::vector<std::unique_ptr<net::io_context>> iocs;  // fixed after construction
  std::size_t next_ioc = 0;                            // the acceptor's strand only
  const HttpServerOptions options;
  const AsyncHandlerFn handler;
  const std::function<void(const AccessLogEntry&)> on_access;
  std::atomic<bool> stopping{false};  // Stop has begun: no new connection, no new request

 private:
  mutable std::mutex mu_;
  std::condition_variable drained_;  // notified whenever `active_` drops
  int active_ = 0;                   // guarded by mu_: counted sessions alive
  bool accepting_posts_ = true;      // guarded by mu_: false once the drain is over
};

}  // namespace tpuemu::api::http_internal
