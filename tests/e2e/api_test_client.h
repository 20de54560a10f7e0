// ApiTestClient: the small vocabulary the queued resource and fault tests share on top of
// HttpClient — a call that fails the test on a transport error, JSON bodies, waiting for an
// Operation or for a resource to reach a state (a condition with a deadline, never a sleep).
#pragma once

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "tests/e2e/api_server.h"

namespace tpuemu::testing {

class ApiTestClient {
 public:
  explicit ApiTestClient(uint16_t port) : client_("127.0.0.1", port) {}

  ClientResponse Call(const std::string& method, const std::string& target,
                      const std::string& body = "") {
    Result<ClientResponse> r = client_.Request(method, target, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClientResponse{};
  }
  // A literal body ("{}") is text, not a JSON string.
  ClientResponse Call(const std::string& method, const std::string& target, const char* body) {
    return Call(method, target, std::string(body));
  }
  ClientResponse Call(const std::string& method, const std::string& target,
                      const nlohmann::json& body) {
    return Call(method, target, body.dump());
  }
  // GET `target` as JSON (null when it is not 200).
  nlohmann::json Get(const std::string& target) {
    ClientResponse r = Call("GET", target);
    return r.status == 200 ? r.Json() : nlohmann::json();
  }
  // Waits for the Operation in `reply` (an Operation JSON) to finish, polling it in the API
  // version it was created in (metadata.apiVersion); the finished Operation.
  nlohmann::json Finish(const ClientResponse& reply) {
    EXPECT_EQ(reply.status, 200) << reply.body;
    if (reply.status != 200) return nlohmann::json();
    const nlohmann::json op = reply.Json();
    const std::string version = op["metadata"].value("apiVersion", "v2");
    const std::string target = "/" + version + "/" + op["name"].get<std::string>();
    nlohmann::json last;
    WaitFor([&] {
      last = Get(target);
      return last.is_object() && last.value("done", false);
    });
    return last.is_object() && last.value("done", false) ? last : nlohmann::json();
  }
  // Waits until GET `target` answers with `field` (a JSON pointer, "/state/state") == `value`.
  bool WaitField(const std::string& target, const std::string& field, const std::string& value,
                 std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
    nlohmann::json last;
    bool ok = WaitFor(
        [&] {
          last = Get(target);
          nlohmann::json::json_pointer pointer(field);
          return last.is_object() && last.contains(pointer) && last[pointer] == value;
        },
        deadline);
    EXPECT_TRUE(ok) << target << " " << field << " never became " << value
                    << "; last: " << last.dump();
    return ok;
  }
  // Waits until GET `target` answers 404.
  bool WaitGone(const std::string& target) {
    return WaitFor([&] { return Call("GET", target).status == 404; });
  }
  HttpClient& http() { return client_; }

 private:
  HttpClient client_;
};

// The error envelope of `r` has this HTTP status, status name and a message containing `part`.
inline void ExpectApiError(const ClientResponse& r, int http, const std::string& status,
                           const std::string& part) {
  EXPECT_EQ(r.status, http) << r.body;
  nlohmann::json e = r.Json();
  ASSERT_TRUE(e.contains("error")) << r.body;
  EXPECT_EQ(e["error"]["status"], status) << r.body;
  EXPECT_NE(e["error"]["message"].get<std::string>().find(part), std::string::npos)
      << e["error"]["message"];
}

}  // namespace tpuemu::testing
