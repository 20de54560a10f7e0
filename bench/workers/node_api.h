// The few node calls bench_workers makes on its tpuemud (project `bench`, zone us-central2-b),
// each bounded by the HTTP client's timeout and every wait by a deadline. One object per thread
// (HttpClient is not thread-safe). Header-only.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/http_client.h"

namespace tpuemu::bench {

class NodeApi {
 public:
  using Clock = std::chrono::steady_clock;

  explicit NodeApi(uint16_t port) : client_("127.0.0.1", port, std::chrono::seconds(30)) {}

  static std::string Path(const std::string& id) {
    return "/v2/projects/bench/locations/us-central2-b/nodes/" + id;
  }

  // POST …/nodes?nodeId=id; true on 200 (the operation).
  bool Create(const std::string& id, const std::string& type,
              const nlohmann::json& metadata = nlohmann::json::object()) {
    nlohmann::json body = {{"acceleratorType", type}, {"runtimeVersion", "tpu-ubuntu2204-base"}};
    if (!metadata.empty()) body["metadata"] = metadata;
    auto r = client_.Request(
        "POST", "/v2/projects/bench/locations/us-central2-b/nodes?nodeId=" + id, body.dump());
    return r.ok() && r->status == 200;
  }

  bool Delete(const std::string& id) {
    auto r = client_.Request("DELETE", Path(id));
    return r.ok() && r->status == 200;
  }

  // The node's JSON; null on an error, {"gone": true} on 404.
  nlohmann::json Get(const std::string& id) {
    auto r = client_.Request("GET", Path(id));
    if (!r.ok()) return nullptr;
    if (r->status == 404) return {{"gone", true}};
    if (r->status != 200) return nullptr;
    return r->Json();
  }

  std::string State(const std::string& id) {
    const nlohmann::json n = Get(id);
    if (!n.is_object()) return "";
    if (n.value("gone", false)) return "GONE";
    return n.value("state", "");
  }

  // GET …/nodes/N/workers' list (an empty array on an error).
  nlohmann::json Workers(const std::string& id) {
    auto r = client_.Request("GET", Path(id) + "/workers");
    if (!r.ok() || r->status != 200) return nlohmann::json::array();
    nlohmann::json j = r->Json();
    return j.is_object() && j.contains("workers") ? j["workers"] : nlohmann::json::array();
  }

  // "booted in N ms" of every worker RUNNING event of project bench whose node id starts with
  // `node_prefix` (tpuemud's own boot time per worker: files, init, SSH answering).
  std::vector<double> BootMs(const std::string& node_prefix) {
    std::vector<double> out;
    int64_t since = 0;
    const std::string resource = "/nodes/" + node_prefix;
    for (int page = 0; page < 1000; ++page) {
      auto r = client_.Request(
          "GET", "/v2/projects/bench/events?pageSize=1000&since=" + std::to_string(since));
      if (!r.ok() || r->status != 200) break;
      const nlohmann::json j = r->Json();
      if (!j.is_object() || !j.contains("events") || j["events"].empty()) break;
      for (const auto& e : j["events"]) {
        const std::string message = e.value("message", "");
        const size_t at = message.find("booted in ");
        if (e.value("resource", "").find(resource) == std::string::npos || at == std::string::npos)
          continue;
        out.push_back(std::strtod(message.c_str() + at + 10, nullptr));
      }
      since = j.value("nextSince", since);
    }
    return out;
  }

  // Polls every `poll` until node `id` is in `state`; false past `deadline`.
  bool WaitState(const std::string& id, const std::string& state, Clock::time_point deadline,
                 std::chrono::milliseconds poll = std::chrono::milliseconds(2)) {
    while (Clock::now() < deadline) {
      if (State(id) == state) return true;
      std::this_thread::sleep_for(poll);
    }
    return false;
  }

  // Latency of one GET of node `id` in ms; negative when it failed.
  double TimedGet(const std::string& id) {
    const auto t0 = Clock::now();
    auto r = client_.Request("GET", Path(id));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return r.ok() && r->status == 200 ? ms : -1;
  }

 private:
  testing::HttpClient client_;
};

}  // namespace tpuemu::bench
