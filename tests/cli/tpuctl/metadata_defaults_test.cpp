// tpuctl inside a TPU VM worker (cli/tpuctl/metadata_defaults.h): where the metadata server is,
// tpu-env's values, and a whole tpuctl run that takes its endpoint, project, zone and node from a
// fake metadata server (which also plays tpuemud's API).
#include "cli/tpuctl/metadata_defaults.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/tpuctl/app.h"

namespace tpuemu::cli {
namespace {

// A one-thread HTTP/1.1 server on 127.0.0.1 (one request per connection): answers GET PATH from
// `routes` (path without the query), 404 otherwise; 403 to a metadata path without
// Metadata-Flavor: Google, as Google's server. Records every request line.
class FakeServer {
 public:
  explicit FakeServer(std::map<std::string, std::string> routes) : routes_(std::move(routes)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(fd_, 16);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  void Set(const std::string& path, const std::string& body) {
    std::lock_guard<std::mutex> lock(mu_);
    routes_[path] = body;
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        head.append(buf, static_cast<size_t>(n));
      }
      std::istringstream in(head);
      std::string method, target;
      in >> method >> target;
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(method + " " + target);
      }
      std::string path = target.substr(0, target.find('?'));
      std::string status = "200 OK", body;
      const bool flavored = head.find("Metadata-Flavor: Google") != std::string::npos;
      std::unique_lock<std::mutex> lock(mu_);
      auto it = routes_.find(path);
      if (path.rfind("/computeMetadata/", 0) == 0 && !flavored) {
        status = "403 Forbidden";
      } else if (it == routes_.end()) {
        status = "404 Not Found";
        body = R"({"error":{"code":404,"message":"no route","status":"NOT_FOUND"}})";
      } else {
        body = it->second;
      }
      lock.unlock();
      std::string reply = "HTTP/1.1 " + status +
                          "\r\nContent-Length: " + std::to_string(body.size()) +
                          "\r\nConnection: close\r\n\r\n" + body;
      (void)!write(c, reply.data(), reply.size());
      close(c);
    }
  }

  std::map<std::string, std::string> routes_;  // guarded by mu_
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_;  // guarded by mu_
};

const char kTpuEnv[] =
    "ACCELERATOR_TYPE: 'v4-16'\nHOST_BOUNDS: '1,1,2'\nNODE_ID: 'n1'\nWORKER_ID: '1'\n"
    "ZONE: 'us-central2-b'\n";

std::map<std::string, std::string> WorkerMetadata(const std::string& api) {
  return {{"/computeMetadata/v1/instance/attributes/tpuemu-api-endpoint", api},
          {"/computeMetadata/v1/project/project-id", "proj-7"},
          {"/computeMetadata/v1/instance/zone", "projects/123456789012/zones/europe-west4-a"},
          {"/computeMetadata/v1/instance/attributes/tpu-env", kTpuEnv}};
}

TEST(MetadataDefaultsTest, ServerFromEnvOrEtcHosts) {
  std::optional<Endpoint> e = MetadataServerEndpoint("127.0.3.2", "");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "127.0.3.2");
  EXPECT_EQ(e->port, 80);
  e = MetadataServerEndpoint("127.0.0.1:8081", "");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->port, 8081);

  const std::string hosts =
      "127.0.0.1 localhost\n# 10.0.0.9 metadata.google.internal\n"
      "127.0.2.2\tmetadata.google.internal metadata\n";
  e = MetadataServerEndpoint(nullptr, hosts);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "127.0.2.2");
  e = MetadataServerEndpoint("", hosts);  // empty = unset
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "127.0.2.2");
  // A developer machine: nothing names it, so nothing is asked.
  EXPECT_FALSE(MetadataServerEndpoint(nullptr, "127.0.0.1 localhost\n::1 localhost\n"));
  EXPECT_FALSE(MetadataServerEndpoint(nullptr, ""));
}

TEST(MetadataDefaultsTest, TpuEnvValues) {
  EXPECT_EQ(TpuEnvValue(kTpuEnv, "NODE_ID"), "n1");
  EXPECT_EQ(TpuEnvValue(kTpuEnv, "WORKER_ID"), "1");
  EXPECT_EQ(TpuEnvValue("NODE_ID: \"x\"\n", "NODE_ID"), "x");
  EXPECT_EQ(TpuEnvValue("NODE_ID: bare\n", "NODE_ID"), "bare");
  EXPECT_EQ(TpuEnvValue(kTpuEnv, "MISSING"), "");
  EXPECT_EQ(TpuEnvValue(kTpuEnv, "NODE"), "");
}

TEST(MetadataDefaultsTest, FetchesTheFourValuesWithTheFlavorHeader) {
  FakeServer server(WorkerMetadata("http://127.0.0.1:18480"));
  MetadataDefaults d = FetchMetadataDefaults(*MetadataServerEndpoint(server.address().c_str(), ""));
  EXPECT_EQ(d.api_endpoint, "http://127.0.0.1:18480");
  EXPECT_EQ(d.project, "proj-7");
  EXPECT_EQ(d.zone, "europe-west4-a");
  EXPECT_EQ(d.node, "n1");
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST(MetadataDefaultsTest, UnreachableServerLeavesEverythingEmptyQuickly) {
  // A port nothing listens on: refused at once, and only the first value is tried.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  close(fd);
  auto start = std::chrono::steady_clock::now();
  MetadataDefaults d = FetchMetadataDefaults(
      *MetadataServerEndpoint(("127.0.0.1:" + std::to_string(port)).c_str(), ""));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(d.api_endpoint, "");
  EXPECT_EQ(d.project, "");
  EXPECT_EQ(d.zone, "");
  EXPECT_EQ(d.node, "");
}

// Sets (or, with nullptr, unsets) an environment variable for one test; restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

int RunTpuctlIn(std::vector<std::string> args, std::string* out, std::string* err) {
  args.insert(args.begin(), "tpuctl");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream o, e;
  int code = RunTpuctl(static_cast<int>(argv.size()), argv.data(), o, e);
  *out = o.str();
  *err = e.str();
  return code;
}

TEST(MetadataDefaultsTest, TpuctlInsideAWorkerNeedsNoFlags) {
  // One fake plays both the metadata server and tpuemud (the endpoint it names is itself).
  FakeServer server({});
  for (const auto& [path, body] : WorkerMetadata("http://" + server.address())) {
    server.Set(path, body);
  }
  server.Set("/v2/projects/proj-7/locations/europe-west4-a/nodes/n1/jobs/j1",
             R"({"jobId":"j1","state":"SUCCEEDED"})");
  FakeServer* self = &server;
  ScopedEnv endpoint("TPUEMU_ENDPOINT", nullptr), project("TPUEMU_PROJECT", nullptr),
      zone("TPUEMU_ZONE", nullptr), host("GCE_METADATA_HOST", server.address().c_str());
  std::string out, err;
  ASSERT_EQ(RunTpuctlIn({"jobs", "describe", "j1", "--format", "value(jobId,state)"}, &out, &err),
            0)
      << err;
  EXPECT_EQ(out, "j1\tSUCCEEDED\n");
  std::vector<std::string> requests = self->requests();
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests.back(), "GET /v2/projects/proj-7/locations/europe-west4-a/nodes/n1/jobs/j1");

  // Flags still win over the metadata server.
  out.clear();
  EXPECT_NE(
      RunTpuctlIn({"--project", "other", "jobs", "describe", "j1", "--node", "n2", "--zone", "z1"},
                  &out, &err),
      0);
  EXPECT_EQ(self->requests().back(), "GET /v2/projects/other/locations/z1/nodes/n2/jobs/j1");
}

TEST(MetadataDefaultsTest, OutsideAWorkerNothingIsAsked) {
  std::ifstream in("/etc/hosts");
  std::stringstream hosts;
  hosts << in.rdbuf();
  if (MetadataServerEndpoint(nullptr, hosts.str())) {
    GTEST_SKIP() << "this machine's /etc/hosts names metadata.google.internal (a TPU VM worker)";
  }
  FakeServer server(WorkerMetadata("http://127.0.0.1:1"));
  ScopedEnv endpoint("TPUEMU_ENDPOINT",
                     ("http://127.0.0.1:" + std::to_string(server.port())).c_str()),
      project("TPUEMU_PROJECT", nullptr), zone("TPUEMU_ZONE", "z9"),
      host("GCE_METADATA_HOST", nullptr);
  std::string out, err;
  RunTpuctlIn({"jobs", "describe", "j1", "--node", "n"}, &out, &err);
  std::vector<std::string> requests = server.requests();
  ASSERT_EQ(requests.size(), 1u) << err;
  EXPECT_EQ(requests[0], "GET /v2/projects/my-proj/locations/z9/nodes/n/jobs/j1");
}

}  // namespace
}  // namespace tpuemu::cli
