// The host's capacity for worker sandboxes is the zone's (service/workers/host_capacity.h): on a
// real tpuemud as root with small budgets, a create past them is refused at once with the real
// service's stockout (its Operation fails with RESOURCE_EXHAUSTED, code 8, naming the budget), a
// queued resource waits in WAITING_FOR_RESOURCES, and a delete frees the room (the queued
// resource provisions, a create succeeds). Skips, saying why, when not root (WorkersTest).
#include <string>

#include "tests/e2e/workers_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

constexpr char kStockout[] = "There is no more capacity in the zone \"us-central2-b\"";

class WorkersCapacityTest : public WorkersTest {
 protected:
  WorkersCapacityTest() { extra_daemon_args_ = {"--worker-max", "2"}; }

  // POSTs a v4-8 (one worker) named `id`; its create Operation once done (null: no answer).
  json CreateOperation(const std::string& id) {
    Result<ClientResponse> r =
        Send("POST", Base() + "/nodes?nodeId=" + id,
             {{"acceleratorType", "v4-8"}, {"runtimeVersion", "tpu-ubuntu2204-base"}});
    if (!r.ok() || r->status != 200) {
      ADD_FAILURE() << (r.ok() ? r->body : r.status().message());
      return nullptr;
    }
    json op = r->Json();
    WaitFor(
        [&] {
          if (op.value("done", false)) return true;
          op = Get("/v2/" + op.value("name", ""));
          return op.is_object() && op.value("done", false);
        },
        std::chrono::seconds(60));
    return op;
  }
  std::string QrState(const std::string& id) {
    json qr = Get(Base() + "/queuedResources/" + id);
    return qr.is_object() && qr.contains("state") ? qr["state"].value("state", "") : "";
  }
  bool WaitGone(const std::string& path) {
    return WaitFor(
        [&] {
          Result<ClientResponse> r = client_->Request("GET", path);
          return r.ok() && r->status == 404;
        },
        std::chrono::seconds(60));
  }
};

TEST_F(WorkersCapacityTest, PastTheBudgetACreateIsAStockoutAQueuedResourceWaitsADeleteFrees) {
  json a = CreateReady("a", {{"acceleratorType", "v4-8"}});
  if (a.value("workerSandbox", json::object()).value("enabled", false) == false) {
    GTEST_SKIP() << "no worker sandboxes here: " << a.dump();
  }
  CreateReady("b", {{"acceleratorType", "v4-8"}});

  // Two sandboxed workers of --worker-max 2: the next create is the zone's stockout, at once.
  json refused = CreateOperation("c");
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  EXPECT_EQ(refused["error"]["code"], 8);
  const std::string message = refused["error"]["message"];
  EXPECT_EQ(message.rfind(kStockout, 0), 0u) << message;
  EXPECT_NE(message.find("--worker-max 2 is spent"), std::string::npos) << message;
  Result<ClientResponse> missing = client_->Request("GET", Base() + "/nodes/c");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);

  // A queued resource waits for the host as for TensorCores.
  json qr = {{"tpu",
              {{"nodeSpec", json::array({{{"parent", "projects/proj/locations/us-central2-b"},
                                          {"nodeId", "qn"},
                                          {"node",
                                           {{"acceleratorType", "v4-8"},
                                            {"runtimeVersion", "tpu-ubuntu2204-base"}}}}})}}}};
  Result<ClientResponse> queued = Send("POST", Base() + "/queuedResources?queuedResourceId=q", qr);
  ASSERT_TRUE(queued.ok() && queued->status == 200) << (queued.ok() ? queued->body : "");
  EXPECT_TRUE(
      WaitFor([&] { return QrState("q") == "WAITING_FOR_RESOURCES"; }, std::chrono::seconds(30)))
      << QrState("q");

  // A delete frees a worker: the queued resource, first in line, takes it.
  ASSERT_TRUE(client_->Request("DELETE", Base() + "/nodes/a").ok());
  ASSERT_TRUE(WaitGone(Base() + "/nodes/a"));
  EXPECT_TRUE(WaitFor([&] { return QrState("q") == "ACTIVE"; }, std::chrono::seconds(60)))
      << QrState("q");
  json qn = Get(Base() + "/nodes/qn");
  EXPECT_EQ(qn["workerSandbox"]["enabled"], true) << qn.dump();
  EXPECT_EQ(CreateOperation("c")["error"]["code"], 8);  // full again

  // Another delete, and the create goes through, sandboxed.
  ASSERT_TRUE(client_->Request("DELETE", Base() + "/nodes/b").ok());
  ASSERT_TRUE(WaitGone(Base() + "/nodes/b"));
  json created = CreateOperation("c");
  EXPECT_FALSE(created.contains("error")) << created.dump();
  json c = Get(Base() + "/nodes/c");
  EXPECT_EQ(c.value("state", ""), "READY") << c.dump();
  EXPECT_EQ(c["workerSandbox"]["enabled"], true) << c.dump();
}

class WorkersMemoryBudgetTest : public WorkersCapacityTest {
 protected:
  WorkersMemoryBudgetTest() {
    // Two workers' memory limits fit, not three.
    extra_daemon_args_ = {"--worker-memory-bytes", std::to_string(256 << 20),
                          "--worker-memory-budget-bytes", std::to_string(600 << 20)};
  }
};

TEST_F(WorkersMemoryBudgetTest, TheMemoryLimitsOfAllWorkersAreABudgetToo) {
  json a = CreateReady("a", {{"acceleratorType", "v4-8"}});
  if (a.value("workerSandbox", json::object()).value("enabled", false) == false) {
    GTEST_SKIP() << "no worker sandboxes here: " << a.dump();
  }
  EXPECT_FALSE(CreateOperation("b").contains("error"));
  json refused = CreateOperation("c");
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  EXPECT_EQ(refused["error"]["code"], 8);
  const std::string message = refused["error"]["message"];
  EXPECT_EQ(message.rfind(kStockout, 0), 0u) << message;
  EXPECT_NE(message.find("--worker-memory-budget-bytes 629145600 is spent"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace tpuemu::testing
