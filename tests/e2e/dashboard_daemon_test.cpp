// The real tpuemud serving the dashboard (--web-dir, the default web folder, Chart.js at
// /vendor/chart.js/ from --chartjs-dir) and GET /_emulator/hardware.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class DashboardDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tpuemu-dash-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "web" / "js");
    fs::create_directories(dir_ / "chart");
    Write(dir_ / "web" / "index.html", "<!doctype html><title>test dashboard</title>");
    Write(dir_ / "web" / "js" / "app.js", "export const x = 1;");
    Write(dir_ / "chart" / "chart.mjs", "export class Chart {}");
    Write(dir_ / "secret.txt", "outside the web folder");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

  std::vector<std::string> Args(bool with_dirs) {
    std::vector<std::string> args = {"--port", "0", "--db", ":memory:", "--log-level", "warn"};
    if (with_dirs) {
      args.insert(args.end(), {"--web-dir", (dir_ / "web").string(), "--chartjs-dir",
                               (dir_ / "chart").string()});
    }
    return args;
  }

  fs::path dir_;
};

TEST_F(DashboardDaemonTest, ServesWebDirAndChartJsBesideTheApi) {
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.Start(Args(true)));
  HttpClient client("127.0.0.1", daemon.port());

  Result<ClientResponse> index = client.Request("GET", "/");
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->Header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(index->body, "<!doctype html><title>test dashboard</title>");

  Result<ClientResponse> js = client.Request("GET", "/js/app.js");
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->Header("content-type"), "text/javascript; charset=utf-8");

  Result<ClientResponse> chart = client.Request("GET", "/vendor/chart.js/chart.mjs");
  EXPECT_EQ(chart->status, 200);
  EXPECT_EQ(chart->body, "export class Chart {}");

  // Nothing outside the web folder, and API paths keep their own answers.
  for (const char* path : {"/..%2fsecret.txt", "/%2e%2e/secret.txt", "/missing.html"}) {
    Result<ClientResponse> r = client.Request("GET", path);
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_EQ(r->Json()["error"]["status"], "NOT_FOUND") << path;
  }
  Result<ClientResponse> api =
      client.Request("GET", "/v2/projects/p/locations/us-central2-b/nodes");
  EXPECT_EQ(api->status, 200);
  EXPECT_EQ(api->Header("content-type"), "application/json");
  EXPECT_FALSE(api->Json().is_discarded()) << api->body;
  Result<ClientResponse> post = client.Request("POST", "/index.html", "{}");
  EXPECT_EQ(post->status, 404);
  EXPECT_EQ(post->Json()["error"]["status"], "NOT_FOUND");
}

TEST_F(DashboardDaemonTest, DefaultWebDirIsTheSourceTreesWebFolder) {
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.Start(Args(false)));
  HttpClient client("127.0.0.1", daemon.port());
  Result<ClientResponse> index = client.Request("GET", "/");
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("<script type=\"module\" src=\"/js/app.js\">"), std::string::npos)
      << index->body.substr(0, 300);
  if (fs::exists("/usr/share/javascript/chart.js/chart.mjs")) {
    Result<ClientResponse> chart = client.Request("GET", "/vendor/chart.js/chart.mjs");
    EXPECT_EQ(chart->status, 200);
    EXPECT_NE(chart->body.find("Chart.js v3"), std::string::npos);
  }
}

TEST_F(DashboardDaemonTest, HardwareOfEveryAcceleratorType) {
  DaemonProcess daemon;
  std::vector<std::string> args = Args(false);
  args.insert(args.end(), {"--zone-capacity-tensorcores", "4096"});
  ASSERT_TRUE(daemon.Start(args));
  HttpClient client("127.0.0.1", daemon.port());

  Result<ClientResponse> all = client.Request("GET", "/_emulator/hardware");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->status, 200) << all->body;
  json body = all->Json();
  EXPECT_EQ(body["zoneCapacityTensorcores"], 4096);
  // The host GEMM kernel chosen at run time from the CPU, e.g. "eigen (avx2+fma)".
  ASSERT_TRUE(body["gemmKernel"].is_string()) << body;
  EXPECT_FALSE(body["gemmKernel"].get<std::string>().empty());
  ASSERT_GT(body["acceleratorTypes"].size(), 40u);
  for (const json& t : body["acceleratorTypes"]) {
    EXPECT_GT(t["chips"].get<int>(), 0) << t;
    EXPECT_GE(t["tensorcores"].get<int>(), t["chips"].get<int>()) << t;
    EXPECT_EQ(t["mxus"].get<int>(),
              t["tensorcores"].get<int>() * t["mxusPerTensorcore"].get<int>());
    EXPECT_GT(t["peakBf16Tflops"].get<double>(), 0) << t;
    EXPECT_GT(t["hbmBytes"].get<double>(), 0) << t;
  }

  // v4-8: 4 chips on 1 host, 2 TensorCores each with 4 MXUs of 128x128 at 1.05 GHz, 32 GiB HBM
  // per chip, 275 TFLOPS per chip (docs/hardware-model.md §2).
  Result<ClientResponse> v4 = client.Request("GET", "/_emulator/hardware?acceleratorType=v4-8");
  ASSERT_EQ(v4->status, 200);
  ASSERT_EQ(v4->Json()["acceleratorTypes"].size(), 1u);
  json t = v4->Json()["acceleratorTypes"][0];
  EXPECT_EQ(t["acceleratorType"], "v4-8");
  EXPECT_EQ(t["generation"], "v4");
  EXPECT_EQ(t["chips"], 4);
  EXPECT_EQ(t["hosts"], 1);
  EXPECT_EQ(t["tensorcores"], 8);
  EXPECT_EQ(t["mxusPerTensorcore"], 4);
  EXPECT_EQ(t["mxuSize"], 128);
  EXPECT_DOUBLE_EQ(t["clockHz"].get<double>(), 1.05e9);
  EXPECT_DOUBLE_EQ(t["hbmBytes"].get<double>(), 4 * 32.0 * 1024 * 1024 * 1024);
  EXPECT_NEAR(t["peakBf16Tflops"].get<double>(), 4 * 275.0, 4 * 275.0 * 0.01);
  EXPECT_EQ(t["zones"], json::array({"us-central2-b"}));

  // v5litepod-16 counts chips: 16 chips, one TensorCore each, 4 hosts.
  json v5e = client.Request("GET", "/_emulator/hardware?acceleratorType=v5litepod-16")
                 ->Json()["acceleratorTypes"][0];
  EXPECT_EQ(v5e["chips"], 16);
  EXPECT_EQ(v5e["tensorcores"], 16);
  EXPECT_EQ(v5e["hosts"], 4);

  Result<ClientResponse> unknown =
      client.Request("GET", "/_emulator/hardware?acceleratorType=v9-8");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(unknown->Json()["error"]["message"],
            "Accelerator type 'v9-8' is not a known accelerator type.");
}

}  // namespace
}  // namespace tpuemu::testing
