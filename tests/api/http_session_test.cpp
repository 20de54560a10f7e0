// The order of a connection's reads and writes (api/http_session.h): a request answered at once is
// written before the next one is read, pipelined requests are still answered in order, a request
// queued behind an error that closes the connection is never answered, and a response the client
// does not read is cut at write_timeout. Real sockets on ephemeral ports; every wait has a
// deadline.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "api/http_server.h"
#include "api/router.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::api {
namespace {

using namespace std::chrono_literals;
using testing::ClientResponse;
using testing::RawConnection;

class HttpSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("GET", "/echo/{id}", [](const HttpRequest&, const PathParams& p) {
      return JsonResponse(200, nlohmann::json{{"id", p.at("id")}});
    });
    router_.Add("POST", "/echo", [](const HttpRequest& r, const PathParams&) {
      return JsonResponse(200, nlohmann::json{{"size", r.body.size()}});
    });
    router_.Add("GET", "/big", [](const HttpRequest&, const PathParams&) {
      HttpResponse response;
      response.content_type = "text/plain";
      response.body = std::string(64 << 20, 'x');  // far more than both sockets' buffers hold
      return response;
    });
  }
  void TearDown() override {
    if (server_) server_->Stop(5s);
  }
  void StartServer(HttpServerOptions options = {}) {
    server_ = std::make_unique<HttpServer>(std::move(options), router_.AsHandler());
    ASSERT_TRUE(server_->Start().ok());
  }

  Router router_;  // declared before server_: outlives it
  std::unique_ptr<HttpServer> server_;
};

// More pipelined requests than the session keeps outstanding (16), all answered inside the
// handler's call: each is written before the next is read, and all come back in order on the
// one connection.
TEST_F(HttpSessionTest, PipelinedRequestsAnsweredAtOnceComeBackInOrder) {
  StartServer();
  RawConnection connection("127.0.0.1", server_->port());
  ASSERT_TRUE(connection.Connect().ok());
  std::string burst;
  for (int i = 0; i < 40; ++i) {
    burst += "GET /echo/" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n";
  }
  burst += "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc";
  burst += "GET /echo/last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_TRUE(connection.Send(burst).ok());
  for (int i = 0; i < 40; ++i) {
    Result<ClientResponse> response = connection.ReadResponse();
    ASSERT_TRUE(response.ok()) << i << ": " << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->Json()["id"], std::to_string(i));
  }
  Result<ClientResponse> post = connection.ReadResponse();
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  EXPECT_EQ(post->Json()["size"], 3);
  Result<ClientResponse> last = connection.ReadResponse();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(last->Json()["id"], "last");
  EXPECT_EQ(last->Header("connection"), "close");
  EXPECT_TRUE(connection.WaitForClose(10s).ok());
}

// Keep-alive requests answered before a body over the limit; the 413 closes the connection and
// the request sent behind it is never answered.
TEST_F(HttpSessionTest, RequestBehindA413IsNotAnswered) {
  HttpServerOptions options;
  options.body_limit_bytes = 16;
  StartServer(options);
  RawConnection connection("127.0.0.1", server_->port());
  ASSERT_TRUE(connection.Connect().ok());
  ASSERT_TRUE(connection.Send("GET /echo/a HTTP/1.1\r\nHost: x\r\n\r\n").ok());
  Result<ClientResponse> first = connection.ReadResponse();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->Json()["id"], "a");
  ASSERT_TRUE(connection
                  .Send("GET /echo/b HTTP/1.1\r\nHost: x\r\n\r\n"
                        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" +
                        std::string(100, 'y') + "GET /echo/c HTTP/1.1\r\nHost: x\r\n\r\n")
                  .ok());
  Result<ClientResponse> second = connection.ReadResponse();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->Json()["id"], "b");
  Result<std::string> rest = connection.ReadUntilClosed(10s);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_TRUE(rest->starts_with("HTTP/1.1 413")) << *rest;
  EXPECT_EQ(rest->find("\"id\":\"c\""), std::string::npos) << *rest;
  EXPECT_EQ(rest->find("HTTP/1.1", 1), std::string::npos) << *rest;  // one response only
}

// A client that asks for a large response and never reads it: the write is cut at write_timeout
// (the idle and read timeouts are far away), and the server counts the connection no more.
TEST_F(HttpSessionTest, ResponseNotReadIsCutAtWriteTimeout) {
  HttpServerOptions options;
  options.write_timeout = 300ms;
  options.read_timeout = 60s;
  options.idle_timeout = 60s;
  StartServer(options);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(server_->port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const std::string request = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  ASSERT_TRUE(testing::WaitFor([&] { return server_->active_connections() == 1; }, 10s));
  EXPECT_TRUE(testing::WaitFor([&] { return server_->active_connections() == 0; }, 20s))
      << server_->active_connections();
  ::close(fd);
}

}  // namespace
}  // namespace tpuemu::api
