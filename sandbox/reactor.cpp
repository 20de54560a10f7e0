#include "sandbox/reactor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "sandbox/process.h"

namespace tpuemu::sandbox {

namespace {
// Without pidfds, exits are looked for this often.
constexpr int kExitPollMs = 50;
constexpr size_t kReadChunk = 64 * 1024;
}  // namespace

struct Reactor::Impl {
  enum class Kind { kListen, kExit, kOutput };
  struct Entry {
    Kind kind;
    int fd = -1;  // listener, pidfd (-1: no pidfd, polled with waitpid) or pipe
    pid_t pid = 0;
    std::function<void(int)> on_accept;
    std::function<void(int)> on_exit;
    std::function<void(std::string_view)> on_data;
    std::function<void()> on_eof;
  };

  std::mutex mu;
  std::condition_variable closed_cv;
  std::map<int, Entry> entries;  // by id; guarded by mu
  std::vector<int> to_close;     // listeners Unlisten'ed from other threads; guarded by mu
  uint64_t close_rounds = 0;     // loop iterations that closed to_close; guarded by mu
  int next_id = 1;               // guarded by mu
  bool stop = false;             // guarded by mu
  int event_fd = -1;
  std::thread thread;

  int Add(Entry e) {
    int id;
    {
      std::lock_guard<std::mutex> lock(mu);
      id = next_id++;
      entries.emplace(id, std::move(e));
    }
    Wake();
    return id;
  }

  void Wake() {
    const uint64_t one = 1;
    if (write(event_fd, &one, sizeof(one)) < 0) {
      // The counter is saturated: a wakeup is pending anyway.
    }
  }

  // Removes entry `id` of `kind` and returns it (kind == kListen for an unknown id: nothing).
  bool Take(int id, Entry* out) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = entries.find(id);
    if (it == entries.end()) return false;
    *out = std::move(it->second);
    entries.erase(it);
    return true;
  }

  void Loop();
  void Handle(int id);
  void CheckExit(int id, pid_t pid);
};

void Reactor::Impl::Loop() {
  std::vector<pollfd> fds;
  std::vector<int> ids;
  std::vector<std::pair<int, pid_t>> polled_exits;
  for (;;) {
    fds.clear();
    ids.clear();
    polled_exits.clear();
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stop) return;
      for (int fd : to_close) close(fd);
      to_close.clear();
      ++close_rounds;
      closed_cv.notify_all();
      fds.push_back({event_fd, POLLIN, 0});
      ids.push_back(0);
      for (const auto& [id, e] : entries) {
        if (e.fd >= 0) {
          fds.push_back({e.fd, POLLIN, 0});
          ids.push_back(id);
        } else if (e.kind == Kind::kExit) {
          polled_exits.emplace_back(id, e.pid);
        }
      }
    }
    const int timeout = polled_exits.empty() ? -1 : kExitPollMs;
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (fds[0].revents != 0) {
      uint64_t count;
      if (read(event_fd, &count, sizeof(count)) < 0) {
        // EAGAIN: another wakeup already drained it.
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) Handle(ids[i]);
    }
    for (const auto& [id, pid] : polled_exits) CheckExit(id, pid);
  }
}

void Reactor::Impl::CheckExit(int id, pid_t pid) {
  int status = 0;
  const pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR)) return;
  if (r < 0) status = -1;  // not (or no longer) a child of ours: nothing to reap
  Entry e;
  if (!Take(id, &e)) return;
  if (e.fd >= 0) close(e.fd);
  if (e.on_exit) e.on_exit(status);
}

void Reactor::Impl::Handle(int id) {
  Kind kind;
  int fd;
  pid_t pid;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = entries.find(id);
    if (it == entries.end()) return;
    kind = it->second.kind;
    fd = it->second.fd;
    pid = it->second.pid;
  }
  switch (kind) {
    case Kind::kExit:
      CheckExit(id, pid);
      return;
    case Kind::kListen:
      for (;;) {
        std::function<void(int)> on_accept;
        {
          // Unlisten from a callback closes the listener: look again before every accept.
          std::lock_guard<std::mutex> lock(mu);
          auto it = entries.find(id);
          if (it == entries.end()) return;
          on_accept = it->second.on_accept;
        }
        const int conn = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn < 0) return;  // EAGAIN, or a connection reset before we took it
        if (on_accept) {
          on_accept(conn);
        } else {
          close(conn);
        }
      }
    case Kind::kOutput: {
      std::string buf(kReadChunk, '\0');
      const ssize_t n = read(fd, buf.data(), buf.size());
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (n > 0) {
        std::function<void(std::string_view)> on_data;
        {
          std::lock_guard<std::mutex> lock(mu);
          auto it = entries.find(id);
          if (it == entries.end()) return;
          on_data = it->second.on_data;
        }
        if (on_data) on_data(std::string_view(buf.data(), static_cast<size_t>(n)));
        return;
      }
      Entry e;
      if (!Take(id, &e)) return;
      close(e.fd);
      if (e.on_eof) e.on_eof();
      return;
    }
  }
}

Reactor::Reactor() : impl_(std::make_unique<Impl>()) {
  impl_->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  impl_->thread = std::thread([impl = impl_.get()] { impl->Loop(); });
}

Reactor::~Reactor() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->Wake();
  impl_->thread.join();
  for (auto& [id, e] : impl_->entries) {
    if (e.fd >= 0) close(e.fd);
  }
  for (int fd : impl_->to_close) close(fd);
  close(impl_->event_fd);
}

Result<Reactor::Listening> Reactor::Listen(const std::string& ip, uint16_t port,
                                           std::function<void(int fd)> on_accept) {
  const std::string where = ip + ":" + std::to_string(port);
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof(*v4);
  } else if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof(*v6);
  } else {
    return Status::InvalidArgument("listen " + where + ": not an IP address");
  }
  const int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::Unavailable("listen " + where + ": " + internal::ErrnoText(errno));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, SOMAXCONN) != 0) {
    const int err = errno;
    close(fd);
    return Status::Unavailable("listen " + where + ": " + internal::ErrnoText(err));
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  Listening out;
  out.port = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                              : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  Impl::Entry e;
  e.kind = Impl::Kind::kListen;
  e.fd = fd;
  e.on_accept = std::move(on_accept);
  out.id = impl_->Add(std::move(e));
  return out;
}

void Reactor::Unlisten(int id) {
  Impl::Entry e;
  if (!impl_->Take(id, &e)) return;
  if (e.kind != Impl::Kind::kListen) {
    // Not a listener: put it back untouched.
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->entries.emplace(id, std::move(e));
    return;
  }
  if (std::this_thread::get_id() == impl_->thread.get_id()) {
    close(e.fd);  // the loop looks entries up again before using their descriptors
    return;
  }
  // The loop may be polling this descriptor: it closes it, and we wait so that the port is free
  // when Unlisten returns.
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->to_close.push_back(e.fd);
  const uint64_t round = impl_->close_rounds;
  lock.unlock();
  impl_->Wake();
  lock.lock();
  impl_->closed_cv.wait(lock, [&] { return impl_->close_rounds > round || impl_->stop; });
}

void Reactor::WatchExit(pid_t pid, std::function<void(int wait_status)> on_exit) {
  Impl::Entry e;
  e.kind = Impl::Kind::kExit;
  e.pid = pid;
  e.fd = internal::PidfdOpen(pid);  // -1: watched with waitpid(WNOHANG) every kExitPollMs
  e.on_exit = std::move(on_exit);
  impl_->Add(std::move(e));
}

void Reactor::WatchOutput(int fd, std::function<void(std::string_view data)> on_data,
                          std::function<void()> on_eof) {
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  Impl::Entry e;
  e.kind = Impl::Kind::kOutput;
  e.fd = fd;
  e.on_data = std::move(on_data);
  e.on_eof = std::move(on_eof);
  impl_->Add(std::move(e));
}

}  // namespace tpuemu::sandbox
