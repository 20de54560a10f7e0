// The dashboard's terminal into a TPU VM worker: GET …/nodes/{node}/workers/{worker}/terminal
// upgraded to a WebSocket (Boost.Beast) that carries one login (service/workers/
// console_terminal.h), as the Cloud console's SSH-in-browser does.
//
// Protocol ("tpuemu.terminal.v1", the subprotocol the server selects when offered):
//   client -> server  binary frames: keystrokes and pastes, UTF-8 bytes for the terminal
//                     text frames: {"resize": {"cols": C, "rows": R}}
//   server -> client  binary frames: what the login prints
//   the end           the login ended (exit, the worker stopped): a close frame, code 1000,
//                     reason "session ended (exit N)"; the client closed (or its tab): the login
//                     is hung up (SIGHUP), as closing a terminal window does
// Bounds: a message at most 64 KiB, the handshake 10 s, a peer that answers no ping for 60 s is
// dropped; TerminalBudget bounds the terminals open at once, in all and per worker.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "api/http_types.h"
#include "service/workers/console_terminal.h"

namespace tpuemu::api {

// How many terminals may be open at once: each is a login, an ssh process and a pty, outside the
// HTTP server's max_connections. Thread-safe. A place may outlive the budget (a login hung up on
// its own thread while tpuemud stops): the counts are shared with the places.
class TerminalBudget {
 public:
  TerminalBudget(int max_total, int max_per_worker)
      : max_total_(max_total), max_per_worker_(max_per_worker) {}
  // A place for one more terminal of `worker` ("node name/index"), given back when the returned
  // pointer is destroyed; null when the budget is spent (with the reason in `why`).
  std::shared_ptr<void> Take(const std::string& worker, std::string* why);

 private:
  struct Counts {
    std::mutex mu;
    int total = 0;                          // guarded by mu
    std::map<std::string, int> per_worker;  // guarded by mu
  };
  const int max_total_;
  const int max_per_worker_;
  const std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
};

// The response that takes the connection over with the terminal (`place` is its budget's).
HttpResponse TerminalUpgrade(const HttpRequest& request,
                             std::unique_ptr<service::ConsoleTerminal> terminal,
                             std::shared_ptr<void> place);

}  // namespace tpuemu::api
