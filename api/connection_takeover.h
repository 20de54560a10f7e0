// ConnectionTakeover: what an HttpResponse carries when its handler takes the connection over
// (HttpResponse::takeover), such as a WebSocket (api/terminal_session.h). The HTTP session
// (api/http_session.cpp) reads no request after one that asks for an upgrade; once every earlier
// response is written it gives its socket and any bytes it read past the request to Start, on
// the socket's strand, and ends without closing the socket. Start owns the connection from then
// on (its timeouts and its end).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>

namespace tpuemu::api {

class ConnectionTakeover {
 public:
  virtual ~ConnectionTakeover() = default;
  virtual void Start(boost::asio::ip::tcp::socket socket, boost::beast::flat_buffer read_ahead) = 0;
};

}  // namespace tpuemu::api
