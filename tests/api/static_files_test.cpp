#include "api/static_files.h"

#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "api/router.h"

namespace tpuemu::api {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& file, const std::string& content) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
}

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::path(::testing::TempDir()) /
            ("tpuemu_static_" + std::to_string(std::random_device()()));
    root_ = base_ / "web";
    Write(root_ / "index.html", "<html>home</html>");
    Write(root_ / "app.mjs", "export {};");
    Write(root_ / "style.css", "body{}");
    Write(root_ / "data" / "x.json", "{}");
    Write(root_ / "img" / "logo.svg", "<svg/>");
    Write(base_ / "secret.txt", "top secret");
    Write(base_ / "vendor" / "chart.umd.js", "/* chart */");
    fs::create_symlink(base_ / "secret.txt", root_ / "link.txt");
    fs::create_directory_symlink(base_, root_ / "up");
    fs::create_symlink(root_ / "style.css", root_ / "inside.css");  // stays in root: allowed
  }
  void TearDown() override { fs::remove_all(base_); }

  HttpResponse Get(const std::string& target) const {
    return files_->Serve(MakeRequest("GET", target));
  }

  fs::path base_, root_;
  std::unique_ptr<StaticFiles> files_;
};

TEST_F(StaticFilesTest, ServesFilesWithContentTypes) {
  files_ = std::make_unique<StaticFiles>(root_);
  HttpResponse index = Get("/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.body, "<html>home</html>");
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  ASSERT_EQ(index.headers.size(), 1u);
  EXPECT_EQ(index.headers[0], (std::pair<std::string, std::string>("Cache-Control", "no-cache")));
  EXPECT_EQ(Get("/app.mjs").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(Get("/style.css?v=3").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(Get("/data/x.json").content_type, "application/json");
  EXPECT_EQ(Get("/img/logo.svg").content_type, "image/svg+xml");
  EXPECT_EQ(Get("/inside.css").status, 200);
  EXPECT_EQ(Get("/index%2Ehtml").status, 200);  // encoded dot inside a name is just a dot
}

TEST_F(StaticFilesTest, TraversalAttemptsAre404) {
  files_ = std::make_unique<StaticFiles>(root_);
  for (const char* target :
       {"/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/..%2fsecret.txt",
        "/data/..%2f..%2fsecret.txt", "/data/../../secret.txt", "/./index.html", "//etc/passwd",
        "/%2fetc/passwd", "/..\\secret.txt", "/..%5csecret.txt", "/index.html%00.js", "/link.txt",
        "/up/secret.txt", "etc/passwd", "/missing.js", "/data"}) {
    HttpResponse response = Get(target);
    EXPECT_EQ(response.status, 404) << target;
    EXPECT_EQ(response.body.find("top secret"), std::string::npos) << target;
    nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
    EXPECT_EQ(body["error"]["status"], "NOT_FOUND") << target;
  }
}

TEST_F(StaticFilesTest, EncodedAbsoluteAndSymlinkEscapesAre404) {
  fs::create_symlink("../secret.txt", root_ / "relative_link.txt");
  fs::create_directory_symlink("..", root_ / "parent");
  fs::create_symlink(root_ / "link.txt", root_ / "chain.txt");  // link -> link -> outside
  files_ = std::make_unique<StaticFiles>(root_);
  const std::string absolute = (base_ / "secret.txt").string();  // "/tmp/.../secret.txt"
  std::string encoded_absolute = "/";
  for (char c : absolute) encoded_absolute += c == '/' ? std::string("%2F") : std::string(1, c);
  for (const std::string& target : std::vector<std::string>{
           // percent-encoded dots and slashes, mixed case, partially encoded
           "/%2e%2e%2fsecret.txt", "/%2E%2E%2Fsecret.txt", "/.%2e/secret.txt", "/%2e./secret.txt",
           "/data/%2e%2e/%2e%2e/secret.txt", "/data%2f..%2f..%2fsecret.txt",
           // double encoding: "%252e" decodes once to the literal name "%2e", never to "."
           "/%252e%252e/secret.txt", "/%252e%252e%252fsecret.txt", "/data/%252e%252e/x.json",
           // absolute paths, plain and encoded
           "/" + absolute, absolute + "/", encoded_absolute, "/%2Fetc%2Fpasswd", "/etc/passwd",
           "/C:%5Cwindows%5Cwin.ini", "/C:/secret.txt",
           // backslashes, raw and encoded
           "/..\\..\\secret.txt", "/data\\..\\..\\secret.txt", "/%5c..%5csecret.txt",
           "/data/..%5C..%5Csecret.txt",
           // overlong UTF-8 dots are just odd bytes, not a traversal
           "/%c0%ae%c0%ae/secret.txt",
           // symlinks inside the root that lead out of it
           "/relative_link.txt", "/parent/secret.txt", "/chain.txt", "/up/web/../secret.txt",
           // NUL and other separators
           "/index.html%00", "/data%00/x.json"}) {
    HttpResponse response = Get(target);
    EXPECT_EQ(response.status, 404) << target;
    EXPECT_EQ(response.body.find("top secret"), std::string::npos) << target;
  }
  // The files themselves are still served by their honest names.
  EXPECT_EQ(Get("/data/x.json").status, 200);
  EXPECT_EQ(Get("/index.html").status, 200);
}

TEST_F(StaticFilesTest, MountServesAnotherDirectory) {
  files_ = std::make_unique<StaticFiles>(root_);
  files_->Mount("/vendor/chart.js/", base_ / "vendor");
  HttpResponse chart = Get("/vendor/chart.js/chart.umd.js");
  EXPECT_EQ(chart.status, 200);
  EXPECT_EQ(chart.body, "/* chart */");
  EXPECT_EQ(Get("/vendor/chart.js/../secret.txt").status, 404);
  EXPECT_EQ(Get("/vendor/chart.js/%2e%2e/secret.txt").status, 404);
  EXPECT_EQ(Get("/index.html").status, 200);  // the root still serves the rest
}

TEST_F(StaticFilesTest, OnlyGet) {
  files_ = std::make_unique<StaticFiles>(root_);
  HttpResponse response = files_->Serve(MakeRequest("POST", "/index.html"));
  EXPECT_EQ(response.status, 405);
}

TEST_F(StaticFilesTest, WorksAsRouterFallback) {
  files_ = std::make_unique<StaticFiles>(root_);
  Router router;
  router.Add("GET", "/healthz",
             [](const HttpRequest&, const PathParams&) { return JsonResponse(200, "{}"); });
  router.SetFallback([this](const HttpRequest& r, const PathParams&) { return files_->Serve(r); });
  HttpResponse response = router.Handle(MakeRequest("GET", "/"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.route, "static");
  EXPECT_EQ(router.Handle(MakeRequest("GET", "/%2e%2e/secret.txt")).status, 404);
}

}  // namespace
}  // namespace tpuemu::api
