// Reactor: one thread that waits on file descriptors for the worker sandboxes — listening TCP
// sockets (each worker's SSH port), child processes' exits (pidfd) and their output pipes — and
// calls back on that thread. Callbacks must be quick (spawn a process, append to a file); they may
// call Reactor methods.
//
// Ownership: the Reactor owns every descriptor handed to it (listening sockets it made, pidfds,
// pipes passed to WatchOutput) and closes them when their watch ends or it is destroyed (which
// joins the thread; pending callbacks are not called). Thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpuemu::sandbox {

class Reactor {
 public:
  Reactor();
  ~Reactor();
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  // Listens on ip:port (TCP, SO_REUSEADDR); each accepted connection's descriptor goes to
  // `on_accept`, which owns it. Returns the listener's id and the bound port (port 0 = any free
  // port). UNAVAILABLE naming ip:port and the errno text when it cannot bind ("Address already in
  // use", "Permission denied").
  struct Listening {
    int id = 0;
    uint16_t port = 0;
  };
  Result<Listening> Listen(const std::string& ip, uint16_t port,
                           std::function<void(int fd)> on_accept);
  // Stops listening (closes the socket); accepted connections are not affected. Unknown ids are
  // ignored.
  void Unlisten(int id);

  // Calls `on_exit(wait_status)` once `pid` (a child of this process) has exited, after reaping
  // it. Never reaps any other child. When `pid` is not (or no longer) a child to reap, `on_exit`
  // gets -1.
  void WatchExit(pid_t pid, std::function<void(int wait_status)> on_exit);

  // Reads `fd` (a pipe's read end, now the Reactor's) until EOF: each chunk read to `on_data`,
  // then `on_eof` once, then closes it.
  void WatchOutput(int fd, std::function<void(std::string_view data)> on_data,
                   std::function<void()> on_eof = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpuemu::sandbox
