// The mixed load of the kill -9 tests and benchmark (tests/e2e/daemon_crash_test.cpp,
// bench/crash_soak/): client threads that create, patch, stop, start, delete and preempt nodes,
// submit jobs and cancel them queued and running, and create and delete queued resources, against a
// tpuemud that may die under them; the ledger of what each client was told (a 200 is an
// acknowledged mutation); and the check that every acknowledged mutation left its effect.
//
// No GoogleTest here: what a test would fail on comes back as data (Ledger::errors, Violation), so
// a benchmark can count it. Every request has a 5 s deadline and a client's loop ends at the first
// request that gets no answer (the daemon died) or when `stop` is set.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/http_client.h"

namespace tpuemu::testing {

inline constexpr char kProject[] = "dur";
inline constexpr char kParent[] = "/v2/projects/dur/locations/us-central2-b";
// The kinds of acknowledged mutation whose effect is checked (Ledger::acks_by_kind).
inline constexpr const char* kKinds[] = {"create",         "patch",     "job",      "cancel-queued",
                                         "cancel-running", "stop",      "start",    "delete",
                                         "preempt",        "qr-create", "qr-delete"};
// Preemptible, so that the fault endpoint may preempt it.
inline constexpr char kNodeBody[] =
    R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base",)"
    R"("schedulingConfig":{"preemptible":true}})";
inline constexpr char kJobBody[] = R"({"workload":{"matmul":{"m":64,"n":64,"k":64}},"steps":2})";
// Long enough to be RUNNING when cancelled, bounded by its timeout if a kill keeps it alive.
inline constexpr char kLongJobBody[] =
    R"({"workload":{"mlp":{"layers":2,"batch":64,"hidden":256,"steps":10000}},)"
    R"("timeoutSeconds":2})";

// The stored states an acknowledged node change leads to (the transition may be cut by the kill,
// or finished by recovery); "" = the node is gone.
inline const std::map<std::string, std::set<std::string>>& StatesAfter() {
  static const auto* states = new std::map<std::string, std::set<std::string>>{
      {"create", {"CREATING", "READY"}}, {"stop", {"STOPPING", "STOPPED"}},
      {"start", {"STARTING", "READY"}},  {"delete", {"DELETING", ""}},
      {"preempt", {"PREEMPTED"}},
  };
  return *states;
}

// What one node's owner thread was told: its last acknowledged change, and the changes sent since
// that got no answer because the daemon died (they may or may not have committed).
struct NodeFacts {
  std::string acked;
  std::set<std::string> unsure;
  std::optional<std::string> labels_acked;  // the "round" label of the last acked patch
  std::set<std::string> labels_unsure;      // rounds of patches since then that got no answer
};

// An acknowledged cancel: the state its reply said, and its kind ("cancel-queued", ...).
struct CancelFacts {
  std::string state;
  std::string kind;
};

// An acknowledged node change whose reply was an Operation (create, patch, stop, start, delete).
struct AckedOperation {
  std::string kind;
  std::string name;  // projects/.../operations/...
};

// What the clients were told, shared by the client threads.
struct Ledger {
  std::mutex mu;
  std::map<std::string, std::string> created;  // node name -> create operation (acknowledged)
  std::map<std::string, std::string> deleted;  // node name -> delete operation (acknowledged)
  std::map<std::string, std::string> jobs;     // job name -> node name (acknowledged)
  std::map<std::string, NodeFacts> nodes;      // node name -> its changes
  std::map<std::string, CancelFacts> cancels;  // job name -> its acknowledged cancel
  std::map<std::string, std::string> qrs;      // queued resource -> "create" | "delete" (acked)
  std::map<std::string, std::set<std::string>> qr_unsure;  // changes since the ack, no answer
  std::map<std::string, int> acks_by_kind;                 // "create", "cancel-running", ...
  std::vector<AckedOperation> operations;                  // in the order acknowledged
  std::vector<std::string> errors;  // 5xx replies: "METHOD target: HTTP n: body"
  std::atomic<int> acks{0};
  std::atomic<int> job_acks{0};
  std::atomic<int> delete_acks{0};
  std::atomic<int> cancel_acks{0};
};

inline std::string NodeName(const std::string& id) {
  return std::string("projects/") + kProject + "/locations/us-central2-b/nodes/" + id;
}
inline std::string QrName(const std::string& id) {
  return std::string("projects/") + kProject + "/locations/us-central2-b/queuedResources/" + id;
}

// What one client thread keeps from one daemon's life to the next: its nodes (stopped ones are
// STOPPED once recovery ran, so they can be started) and queued resources.
struct ClientState {
  std::vector<std::string> mine;    // node ids this thread created and has not deleted
  std::set<std::string> preempted;  // of those, the ones it preempted: only a delete now
  std::set<std::string> stopped;    // of those, the ones it stopped: started in turn
  std::vector<std::string> qrs;     // queued resources it created and has not deleted
};

// One client thread's load until the daemon dies (a request fails) or `stop` is set: on the nodes
// it created, in turn, a patch, a job, a long job and a second one queued behind it that are both
// cancelled, a stop or a start, a delete, a preemption (then a delete), and a queued resource
// created or deleted. `round` names its resources and seeds its choices; a 5xx lands in
// ledger.errors and ends the load.
inline void ClientLoad(uint16_t port, int thread, int round, Ledger& ledger,
                       std::atomic<bool>& stop, ClientState& state) {
  using nlohmann::json;
  HttpClient client("127.0.0.1", port, std::chrono::seconds(5));
  std::mt19937 rng(static_cast<unsigned>(thread * 1000 + round));
  std::vector<std::string>& mine = state.mine;
  std::set<std::string>& preempted = state.preempted;
  std::set<std::string>& stopped = state.stopped;
  std::vector<std::string>& qrs = state.qrs;
  const std::string prefix = std::to_string(round) + "-" + std::to_string(thread) + "-";
  // Sends one request; nullopt when the daemon is gone (then the load ends) or on a 5xx.
  auto send = [&](const std::string& method, const std::string& target,
                  const std::string& body = "") -> std::optional<ClientResponse> {
    Result<ClientResponse> r = client.Request(method, target, body);
    if (!r.ok()) return std::nullopt;  // not acknowledged
    if (r->status >= 500) {
      std::lock_guard lock(ledger.mu);
      ledger.errors.push_back(method + " " + target + ": HTTP " + std::to_string(r->status) + ": " +
                              r->body);
      return std::nullopt;
    }
    return *r;
  };
  auto ack = [&](const std::string& kind) {
    ++ledger.acks_by_kind[kind];  // under ledger.mu
    ++ledger.acks;
  };
  // A change of node `id` (`kind` in StatesAfter, or "patch", which keeps the state and sets
  // `labels`): acknowledged on 200; unsure when the daemon died before it answered.
  auto node_change = [&](const std::string& id, const std::string& kind, const std::string& method,
                         const std::string& target, const std::string& body,
                         const std::optional<std::string>& labels =
                             std::nullopt) -> std::optional<ClientResponse> {
    std::optional<ClientResponse> r = send(method, target, body);
    std::lock_guard lock(ledger.mu);
    NodeFacts& facts = ledger.nodes[NodeName(id)];
    if (!r) {  // in flight at the kill
      if (labels) {
        facts.labels_unsure.insert(*labels);
      } else {
        facts.unsure.insert(kind);
      }
    } else if (r->status == 200) {
      if (labels) {
        facts.labels_acked = labels;
        facts.labels_unsure.clear();
      } else {
        facts.acked = kind;
        facts.unsure.clear();
      }
      ack(kind);
      const json reply = r->Json();
      const std::string name = reply.is_object() ? reply.value("name", "") : "";
      if (name.find("/operations/") != std::string::npos) {
        ledger.operations.push_back({kind, name});
      }
    }
    return r;
  };
  for (int k = 0; !stop; ++k) {
    const std::string parent = kParent;
    if (mine.empty() || k % 9 == 0) {
      const std::string id = "n" + prefix + std::to_string(k);
      std::optional<ClientResponse> r =
          node_change(id, "create", "POST", parent + "/nodes?nodeId=" + id, kNodeBody);
      if (!r) return;
      if (r->status == 200) {
        std::lock_guard lock(ledger.mu);
        ledger.created[NodeName(id)] = r->Json()["name"];
        mine.push_back(id);
      }
      continue;
    }
    const std::size_t pick = rng() % mine.size();
    const std::string id = mine[pick];
    const std::string node = parent + "/nodes/" + id;
    // A stopped node is tried for a start every third step: it needs its STOPPED first.
    const int action = preempted.count(id) ? 5 : !stopped.empty() && k % 3 == 1 ? 4 : k % 9;
    if (action == 1) {
      const std::string label_round = std::to_string(k);
      if (!node_change(id, "patch", "PATCH", node + "?updateMask=labels",
                       R"({"labels":{"round":")" + label_round + R"("}})", label_round)) {
        return;
      }
    } else if (action == 2) {
      std::optional<ClientResponse> r = send("POST", node + "/jobs", kJobBody);
      if (!r) return;
      if (r->status != 200) continue;
      std::lock_guard lock(ledger.mu);
      ledger.jobs[r->Json()["name"]] = NodeName(id);
      ++ledger.job_acks;
      ack("job");
    } else if (action == 3) {
      // A long job and one queued behind it, both cancelled: the second while QUEUED, the first
      // (mostly) while RUNNING. Each cancel's reply is what the store must keep.
      std::vector<std::string> long_jobs;
      for (int j = 0; j < 2; ++j) {
        std::optional<ClientResponse> r = send("POST", node + "/jobs", kLongJobBody);
        if (!r) return;
        if (r->status != 200) break;
        long_jobs.push_back(r->Json()["name"]);
        std::lock_guard lock(ledger.mu);
        ledger.jobs[long_jobs.back()] = NodeName(id);
        ++ledger.job_acks;
        ack("job");
      }
      for (auto it = long_jobs.rbegin(); it != long_jobs.rend(); ++it) {
        std::optional<ClientResponse> r = send("POST", "/v2/" + *it + ":cancel");
        if (!r) return;
        if (r->status != 200) continue;
        const json reply = r->Json();
        // It had ended already (timeout, node stopping): returned as it was.
        const std::string kind = reply.value("reason", "") != "cancelled by the user"
                                     ? "cancel-ended"
                                 : reply.contains("startTime") ? "cancel-running"
                                                               : "cancel-queued";
        std::lock_guard lock(ledger.mu);
        ledger.cancels[*it] = {reply.value("state", ""), kind};
        ++ledger.cancel_acks;
        ack(kind);
      }
    } else if (action == 4) {
      // Start the node this thread stopped (once it is STOPPED), else stop this one.
      const std::string target_id = stopped.empty() ? id : *stopped.begin();
      const std::string kind = stopped.empty() ? "stop" : "start";
      std::optional<ClientResponse> r =
          node_change(target_id, kind, "POST", parent + "/nodes/" + target_id + ":" + kind, "{}");
      if (!r) return;
      if (r->status == 200 && kind == "stop") stopped.insert(target_id);
      if (r->status == 200 && kind == "start") stopped.erase(target_id);
    } else if (action == 5 || action == 6) {
      std::optional<ClientResponse> r = node_change(id, "delete", "DELETE", node, "");
      if (!r) return;
      if (r->status == 404) {  // an earlier delete, unanswered at a kill, committed
        mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(pick));
        preempted.erase(id);
        stopped.erase(id);
      }
      if (r->status != 200) continue;
      std::lock_guard lock(ledger.mu);
      ledger.deleted[NodeName(id)] = r->Json()["name"];
      ++ledger.delete_acks;
      mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(pick));
      preempted.erase(id);
      stopped.erase(id);
    } else if (action == 7) {
      std::optional<ClientResponse> r =
          node_change(id, "preempt", "POST",
                      std::string("/_emulator/projects/") + kProject +
                          "/locations/us-central2-b/nodes/" + id + ":preempt",
                      "{}");
      if (!r) return;
      if (r->status == 200) preempted.insert(id);
    } else {
      // A queued resource: created, or this thread's one deleted (force: with its node).
      const bool create = qrs.empty();  // one at a time: each reconcile is a write batch
      const std::string qr_id = create ? "q" + prefix + std::to_string(k) : qrs.front();
      const std::string kind = create ? "qr-create" : "qr-delete";
      const std::string target = create ? parent + "/queuedResources?queuedResourceId=" + qr_id
                                        : parent + "/queuedResources/" + qr_id + "?force=true";
      const std::string body =
          create
              ? json{{"tpu",
                      {{"nodeSpec", json::array({{{"parent", std::string("projects/") + kProject +
                                                                 "/locations/us-central2-b"},
                                                  {"nodeId", "qn" + prefix + std::to_string(k)},
                                                  {"node", json::parse(kNodeBody)}}})}}}}
                    .dump()
              : "";
      std::optional<ClientResponse> r = send(create ? "POST" : "DELETE", target, body);
      std::lock_guard lock(ledger.mu);
      if (!r) {
        ledger.qr_unsure[QrName(qr_id)].insert(kind);
        return;
      }
      if (!create && r->status == 404) qrs.erase(qrs.begin());  // gone by an unanswered delete
      if (r->status != 200) continue;
      ledger.qrs[QrName(qr_id)] = create ? "create" : "delete";
      ledger.qr_unsure.erase(QrName(qr_id));
      ack(kind);
      if (create) {
        qrs.push_back(qr_id);
      } else {
        qrs.erase(qrs.begin());
      }
    }
  }
}

// What a node, job or queued resource was found in: by reading the store after a kill, or the API
// after a restart.
struct Found {
  std::map<std::string, std::string> node_state;  // node -> state
  std::map<std::string, std::string> node_round;  // node -> its "round" label ("" = none)
  std::map<std::string, std::string> job_state;   // job -> state
  std::map<std::string, std::string> qr_state;    // queued resource -> state
  bool complete = true;                           // false: a list failed
};

// An acknowledged mutation whose effect is missing: its kind (kKinds, or "cancel-ended"), the
// resource, and a sentence for a test's failure.
struct Violation {
  std::string kind;
  std::string resource;
  std::string message;
};

struct EffectCheck {
  int checked = 0;  // acknowledged changes checked
  std::vector<Violation> violations;
};

// Every acknowledged change's effect in `found`: a node is in a state its last acknowledged change
// leads to (or a change that got no answer; after recovery not mid-transition), a patch's labels
// are stored, a cancelled job is in the state its cancel reply said, an acknowledged queued
// resource is there unless deleted, an acknowledged queued-resource delete is DELETING or done.
inline EffectCheck CheckEffects(Ledger& ledger, const Found& found, bool after_recovery) {
  std::lock_guard lock(ledger.mu);
  EffectCheck result;
  auto fail = [&](const std::string& kind, const std::string& resource, const std::string& what) {
    result.violations.push_back({kind, resource, what});
  };
  for (const auto& [node, facts] : ledger.nodes) {
    if (facts.acked.empty()) continue;  // its create was never acknowledged
    const auto it = found.node_state.find(node);
    const std::string state = it == found.node_state.end() ? "" : it->second;
    std::set<std::string> allowed = StatesAfter().at(facts.acked);
    std::string unsure;
    for (const std::string& kind : facts.unsure) {
      const std::set<std::string>& more = StatesAfter().at(kind);
      allowed.insert(more.begin(), more.end());
      unsure += " " + kind;
    }
    if (after_recovery) {
      // Recovery finishes what the kill cut: no node stays mid-transition (checked elsewhere).
      for (const char* transient : {"CREATING", "STOPPING", "STARTING", "DELETING"}) {
        allowed.erase(transient);
      }
    }
    if (!allowed.count(state)) {
      fail(facts.acked, node,
           "node " + node + " is '" + state + "' after an acknowledged " + facts.acked +
               (unsure.empty() ? "" : " (unanswered since:" + unsure + ")"));
    }
    if (facts.labels_acked && !state.empty()) {
      const std::string round = found.node_round.count(node) ? found.node_round.at(node) : "";
      if (!(round == *facts.labels_acked || facts.labels_unsure.count(round))) {
        fail("patch", node,
             "node " + node + " has labels round '" + round + "', acknowledged '" +
                 *facts.labels_acked + "'");
      }
    }
    ++result.checked;
  }
  for (const auto& [job, cancel] : ledger.cancels) {
    const std::string& replied = cancel.state;
    const auto it = found.job_state.find(job);
    if (!(replied == "CANCELLED" || replied == "SUCCEEDED" || replied == "FAILED" ||
          replied == "TIMED_OUT")) {
      fail(cancel.kind, job,
           "the cancel of " + job + " was acknowledged with state '" + replied + "'");
    }
    if (it == found.job_state.end()) {
      fail(cancel.kind, job, "cancelled job lost: " + job);
    } else if (it->second != replied) {
      fail(cancel.kind, job,
           "job " + job + " is '" + it->second + "', not '" + replied +
               "' as its cancel reply said");
    }
    ++result.checked;
  }
  for (const auto& [qr, change] : ledger.qrs) {
    const auto it = found.qr_state.find(qr);
    const bool unsure = ledger.qr_unsure.count(qr) > 0;  // a delete may have committed
    if (change == "create" && !unsure && it == found.qr_state.end()) {
      fail("qr-create", qr, "acknowledged queued resource lost: " + qr);
    } else if (change == "delete" && it != found.qr_state.end() && it->second != "DELETING") {
      fail("qr-delete", qr, "queued resource " + qr + " is '" + it->second + "' after its delete");
    }
    ++result.checked;
  }
  return result;
}

// Every item of a paged list (`key` = "nodes", "jobs"), or nullopt when a page fails.
inline std::optional<std::vector<nlohmann::json>> ListAll(HttpClient& c, const std::string& path,
                                                          const std::string& key) {
  std::vector<nlohmann::json> items;
  std::string token;
  do {
    std::string target = path + (path.find('?') == std::string::npos ? "?" : "&") + "pageSize=500" +
                         (token.empty() ? "" : "&pageToken=" + token);
    Result<ClientResponse> r = c.Request("GET", target);
    if (!r.ok() || r->status != 200) return std::nullopt;
    nlohmann::json page = r->Json();
    if (page.contains(key)) {
      for (const nlohmann::json& item : page[key]) items.push_back(item);
    }
    token = page.value("nextPageToken", "");
  } while (!token.empty());
  return items;
}

// Nodes, jobs and queued resources of the project as the API lists them.
inline Found ReadThroughApi(HttpClient& c) {
  using nlohmann::json;
  Found found;
  const std::string base = std::string("/v2/projects/") + kProject + "/locations/-/";
  std::optional<std::vector<json>> nodes = ListAll(c, base + "nodes", "nodes");
  std::optional<std::vector<json>> jobs = ListAll(c, base + "jobs", "jobs");
  std::optional<std::vector<json>> qrs = ListAll(c, base + "queuedResources", "queuedResources");
  found.complete = nodes && jobs && qrs;
  for (const json& n : nodes.value_or(std::vector<json>{})) {
    found.node_state[n["name"]] = n.value("state", "");
    found.node_round[n["name"]] = n.value("/labels/round"_json_pointer, "");
  }
  for (const json& j : jobs.value_or(std::vector<json>{})) found.job_state[j["name"]] = j["state"];
  for (const json& q : qrs.value_or(std::vector<json>{})) {
    found.qr_state[q["name"]] = q.value("/state/state"_json_pointer, "");
  }
  return found;
}

}  // namespace tpuemu::testing
