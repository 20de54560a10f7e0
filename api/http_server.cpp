// HttpServer: the listener (acceptor, accept loop, connection cap) and the lifecycle (Start, Stop
// with drain). Each accepted connection becomes a Session (api/http_session.h) on a strand of one
// of the IO threads' io_contexts, as in Beast's advanced server example.
#include "api/http_server.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/error.hpp>

#include "api/http_server_core.h"
#include "api/http_session.h"

namespace tpuemu::api {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using http_internal::ListenerBudget;
using http_internal::ServerCore;
using http_internal::Session;

//------------------------------------------------------------------------------

// The listener: accepts connections on the first io_context's strand and starts a Session for
// each. Stop keeps weak references to the sessions it must tell to drain.
struct HttpServer::Impl {
  explicit Impl(std::shared_ptr<ServerCore> c) : core(std::move(c)) {}

  void DoAccept() {
    acceptor->async_accept(
        net::make_strand(core->NextIoContext()),
        [this](beast::error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || core->stopping) return;
    if (ec) {
      // EMFILE and friends: back off instead of spinning on the failing accept.
      spdlog::warn("http: accept: {}", ec.message());
      retry_timer->expires_after(std::chrono::milliseconds(50));
      retry_timer->async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && !core->stopping) DoAccept();
      });
      return;
    }
    // Only this strand adds connections, so the count cannot grow past the cap behind our back.
    bool over_cap = core->Full();
    auto session = std::make_shared<Session>(core, std::move(socket), !over_cap);
    {
      std::lock_guard lock(sessions_mu);
      if (core->stopping) return;  // Stop's snapshot may have missed it: drop it here
      if (sessions.size() > 64 &&
          sessions.size() > 2 * static_cast<std::size_t>(std::max(1, core->Active()))) {
        std::erase_if(sessions, [](const std::weak_ptr<Session>& s) { return s.expired(); });
      }
      sessions.push_back(session);
    }
    if (over_cap) {
      session->Reject();
    } else {
      session->Run();
    }
    DoAccept();
  }

  std::vector<std::shared_ptr<Session>> Snapshot() {
    std::lock_guard lock(sessions_mu);
    std::vector<std::shared_ptr<Session>> out;
    for (const auto& weak : sessions) {
      if (auto session = weak.lock()) out.push_back(std::move(session));
    }
    return out;
  }

  // A listener of AddListener's: its own acceptor and handler, on the main acceptor's strand (so
  // NextIoContext stays on one strand), its sessions registered with the rest.
  struct Extra : std::enable_shared_from_this<Extra> {
    Extra(Impl* i, net::any_io_executor strand, std::shared_ptr<const AsyncHandlerFn> h,
          std::shared_ptr<ListenerBudget> b = nullptr)
        : impl(i), acceptor(strand), retry(strand), handler(std::move(h)), budget(std::move(b)) {}
    void DoAccept() {
      acceptor.async_accept(net::make_strand(impl->core->NextIoContext()),
                            [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
                              self->OnAccept(ec, std::move(socket));
                            });
    }
    void OnAccept(beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || impl->core->stopping || !acceptor.is_open()) {
        return;
      }
      if (ec) {
        retry.expires_after(std::chrono::milliseconds(50));
        retry.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
          if (!wait_ec && !self->impl->core->stopping) self->DoAccept();
        });
        return;
      }
      std::shared_ptr<Session> session;
      bool over_cap = false;
      if (budget) {
        beast::error_code peer_ec;
        const std::string peer = socket.remote_endpoint(peer_ec).address().to_string();
        over_cap = !budget->TryEnter(peer);
        session = std::make_shared<Session>(impl->core, std::move(socket), false, handler,
                                            over_cap ? nullptr : budget, peer);
      } else {
        over_cap = impl->core->Full();
        session = std::make_shared<Session>(impl->core, std::move(socket), !over_cap, handler);
      }
      {
        std::lock_guard lock(impl->sessions_mu);
        if (impl->core->stopping) return;
        impl->sessions.push_back(session);
      }
      if (over_cap) {
        session->Reject();
      } else {
        session->Run();
      }
      DoAccept();
    }
    Impl* impl;
    tcp::acceptor acceptor;
    net::steady_timer retry;
    std::shared_ptr<const AsyncHandlerFn> handler;
    std::shared_ptr<ListenerBudget> budget;  // null: the server's max_connections
  };

  std::shared_ptr<ServerCore> core;  // first member: outlives the acceptor and timer below
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::steady_timer> retry_timer;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work;  // one per ioc
  std::vector<std::thread> threads;
  uint16_t port = 0;

  std::mutex sessions_mu;
  std::vector<std::weak_ptr<Session>> sessions;  // guarded by sessions_mu

  std::mutex extras_mu;
  std::map<std::string, std::shared_ptr<Extra>> extras;  // "host:port"; guarded by extras_mu

  std::mutex lifecycle_mu;  // serializes Start and Stop
  bool started = false;     // guarded by lifecycle_mu
  bool stopped = false;     // guarded by lifecycle_mu
};

HttpServer::HttpServer(HttpServerOptions options, AsyncHandlerFn handler,
                       std::function<void(const AccessLogEntry&)> on_access)
    : impl_(std::make_unique<Impl>(std::make_shared<ServerCore>(
          std::move(options), std::move(handler), std::move(on_access)))) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  std::lock_guard lifecycle(impl_->lifecycle_mu);
  if (impl_->started || impl_->stopped) {
    return Status::FailedPrecondition("HttpServer::Start called twice");
  }
  const HttpServerOptions& options = impl_->core->options;
  std::string where = options.host + ":" + std::to_string(options.port);
  auto failed = [&](std::string_view step, const beast::error_code& ec) {
    impl_->acceptor.reset();
    return Status::Unavailable("Cannot listen on " + where + ": " + std::string(step) + ": " +
                               ec.message());
  };

  beast::error_code ec;
  tcp::resolver resolver(*impl_->core->iocs.front());
  auto endpoints = resolver.resolve(options.host, std::to_string(options.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) return failed("resolve", ec);
  tcp::endpoint endpoint = endpoints.begin()->endpoint();

  impl_->acceptor.emplace(net::make_strand(*impl_->core->iocs.front()));
  impl_->acceptor->open(endpoint.protocol(), ec);
  if (ec) return failed("open", ec);
  impl_->acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (ec) return failed("set_option", ec);
  impl_->acceptor->bind(endpoint, ec);
  if (ec) return failed("bind", ec);
  impl_->acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) return failed("listen", ec);
  impl_->port = impl_->acceptor->local_endpoint(ec).port();
  impl_->retry_timer.emplace(impl_->acceptor->get_executor());

  for (auto& ioc : impl_->core->iocs) impl_->work.emplace_back(ioc->get_executor());
  impl_->DoAccept();
  for (auto& ioc : impl_->core->iocs) {
    impl_->threads.emplace_back([ioc = ioc.get()] {
      while (true) {
        try {
          ioc->run();
          return;
        } catch (const std::exception& e) {
          spdlog::error("http: io thread caught: {}", e.what());
        }
      }
    });
  }
  impl_->started = true;
  spdlog::info("http: listening on {}:{}", options.host, impl_->port);
  return Status::Ok();
}

uint16_t HttpServer::port() const { return impl_->port; }

int HttpServer::active_connections() const { return impl_->core->Active(); }

Status HttpServer::AddListener(const std::string& host, uint16_t port, AsyncHandlerFn handler) {
  std::lock_guard lifecycle(impl_->lifecycle_mu);
  const std::string where = host + ":" + std::to_string(port);
  if (!impl_->started || impl_->stopped) {
    return Status::FailedPrecondition("cannot listen on " + where + ": the server is not running");
  }
  std::lock_guard lock(impl_->extras_mu);
  if (impl_->extras.count(where)) return Status::AlreadyExists("already listening on " + where);
  beast::error_code ec;
  net::ip::address address = net::ip::make_address(host, ec);
  if (ec) return Status::InvalidArgument("cannot listen on " + where + ": " + ec.message());
  tcp::endpoint endpoint(address, port);
  auto extra =
      std::make_shared<Impl::Extra>(impl_.get(), impl_->acceptor->get_executor(),
                                    std::make_shared<const AsyncHandlerFn>(std::move(handler)));
  auto failed = [&](std::string_view step) {
    return Status::Unavailable("Cannot listen on " + where + ": " + std::string(step) + ": " +
                               ec.message());
  };
  extra->acceptor.open(endpoint.protocol(), ec);
  if (ec) return failed("open");
  extra->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (ec) return failed("set_option");
  extra->acceptor.bind(endpoint, ec);
  if (ec) return failed("bind");
  extra->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return failed("listen");
  net::post(extra->acceptor.get_executor(), [extra] { extra->DoAccept(); });
  impl_->extras[where] = std::move(extra);
  return Status::Ok();
}

Status HttpServer::AddListener(int listening_fd, const std::string& key, AsyncHandlerFn handler,
                               ListenerLimits limits) {
  std::lock_guard lifecycle(impl_->lifecycle_mu);
  if (!impl_->started || impl_->stopped) {
    close(listening_fd);
    return Status::FailedPrecondition("cannot serve " + key + ": the server is not running");
  }
  std::lock_guard lock(impl_->extras_mu);
  if (impl_->extras.count(key)) {
    close(listening_fd);
    return Status::AlreadyExists("already serving " + key);
  }
  auto extra = std::make_shared<Impl::Extra>(
      impl_.get(), impl_->acceptor->get_executor(),
      std::make_shared<const AsyncHandlerFn>(std::move(handler)),
      std::make_shared<ListenerBudget>(limits.max_connections, limits.max_connections_per_peer));
  beast::error_code ec;
  extra->acceptor.assign(tcp::v4(), listening_fd, ec);
  if (ec) {
    close(listening_fd);
    return Status::Unavailable("cannot serve " + key + ": " + ec.message());
  }
  net::post(extra->acceptor.get_executor(), [extra] { extra->DoAccept(); });
  impl_->extras[key] = std::move(extra);
  return Status::Ok();
}

void HttpServer::RemoveListener(const std::string& host, uint16_t port) {
  RemoveListener(host + ":" + std::to_string(port));
}

void HttpServer::RemoveListener(const std::string& key) {
  std::shared_ptr<Impl::Extra> extra;
  {
    std::lock_guard lock(impl_->extras_mu);
    auto it = impl_->extras.find(key);
    if (it == impl_->extras.end()) return;
    extra = std::move(it->second);
    impl_->extras.erase(it);
  }
  net::post(extra->acceptor.get_executor(), [extra] {
    beast::error_code ec;
    extra->acceptor.close(ec);
    extra->retry.cancel();
  });
}

void HttpServer::Stop(std::chrono::milliseconds drain) {
  std::lock_guard lifecycle(impl_->lifecycle_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (!impl_->started) return;
  ServerCore& core = *impl_->core;
  auto deadline = std::chrono::steady_clock::now() + drain;

  {
    std::lock_guard lock(impl_->sessions_mu);
    core.stopping = true;
  }
  std::map<std::string, std::shared_ptr<Impl::Extra>> extras;
  {
    std::lock_guard lock(impl_->extras_mu);
    extras.swap(impl_->extras);
  }
  net::post(impl_->acceptor->get_executor(), [impl = impl_.get(), extras = std::move(extras)] {
    beast::error_code ec;
    impl->acceptor->close(ec);
    impl->retry_timer->cancel();
    for (auto& [where, extra] : extras) {
      extra->acceptor.close(ec);
      extra->retry.cancel();
    }
  });
  for (auto& session : impl_->Snapshot()) session->Drain();
  // The snapshot above is gone, so sessions can finish and drop the count to zero.
  core.DrainUntil(deadline);
  for (auto& session : impl_->Snapshot()) session->Abort();
  // With every socket closed and no new posts accepted, run() returns once the queue empties.
  for (auto& guard : impl_->work) guard.reset();
  for (std::thread& thread : impl_->threads) thread.join();
  impl_->threads.clear();
  spdlog::info("http: stopped");
}

}  // namespace tpuemu::api
