// JobsApiFixture: the whole stack in-process (ApiServer) and the calls the jobs e2e tests make
// through real HTTP — create a READY node, submit, long-poll :wait until terminal.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "tests/e2e/api_paths.h"
#include "tests/e2e/api_server.h"

namespace tpuemu::testing {

class JobsApiFixture : public ::testing::Test {
 protected:
  // `jobs`: the job limits (tpuemud's --max-hlo-* flags); `http`: the server's (body limit).
  explicit JobsApiFixture(service::JobLimits jobs = {}, api::HttpServerOptions http = {})
      : server_({.provisioning_delay_ms = 0, .transition_delay_ms = 0}, http,
                {.utilization_interval_ms = 0}, jobs) {}

  ClientResponse Call(const std::string& method, const std::string& target,
                      const std::string& body = "") {
    Result<ClientResponse> r = client_.Request(method, target, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClientResponse{};
  }
  void CreateReady(const std::string& id, const std::string& parent = kParent,
                   const std::string& type = "v4-8") {
    ClientResponse r =
        Call("POST", parent + "/nodes?nodeId=" + id,
             nlohmann::json{{"acceleratorType", type}, {"runtimeVersion", "tpu-ubuntu2204-base"}}
                 .dump());
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_FALSE(WaitOperation(client_, r.Json()["name"]).is_null());
  }
  nlohmann::json Submit(const std::string& node, const std::string& body, int status = 200,
                        const std::string& parent = kParent) {
    ClientResponse r = Call("POST", parent + "/nodes/" + node + "/jobs", body);
    EXPECT_EQ(r.status, status) << r.body.substr(0, 2000);
    return r.Json();
  }
  // :wait long-poll until terminal (each call returns at the latest after `timeout`).
  nlohmann::json Wait(const std::string& name) {
    nlohmann::json job;
    for (int i = 0; i < 30; ++i) {
      ClientResponse r = Call("GET", "/v2/" + name + ":wait?timeout=2s");
      EXPECT_EQ(r.status, 200) << r.body;
      job = r.Json();
      const std::string state = job.value("state", "");
      if (state != "QUEUED" && state != "RUNNING") break;
    }
    return job;
  }
  bool StateIs(const std::string& name, const std::string& state) {
    return Call("GET", "/v2/" + name).Json().value("state", "") == state;
  }

  ApiServer server_;
  HttpClient client_{"127.0.0.1", server_.port(), std::chrono::seconds(30)};
};

}  // namespace tpuemu::testing
