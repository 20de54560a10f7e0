// Endpoint::Parse (cli/tpuctl/http_client.h) and ApiClient error translation
// (cli/tpuctl/api_client.h).
#include "cli/tpuctl/api_client.h"

#include <gtest/gtest.h>

namespace tpuemu::cli {
namespace {

TEST(EndpointTest, ParsesHostPortAndPrefix) {
  Result<Endpoint> e = Endpoint::Parse("http://127.0.0.1:8470");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 8470);
  EXPECT_EQ(e->prefix, "");
  e = Endpoint::Parse("http://tpu.local/base/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "tpu.local");
  EXPECT_EQ(e->port, 80);
  EXPECT_EQ(e->prefix, "/base");
}

TEST(EndpointTest, RejectsWhatItCannotSpeak) {
  for (const char* bad :
       {"https://x", "127.0.0.1:8470", "http://", "http://h:0", "http://h:99999", "http://h:80x"}) {
    Result<Endpoint> e = Endpoint::Parse(bad);
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) {
      EXPECT_NE(e.status().message().find(bad), std::string::npos) << bad;
    }
  }
}

TEST(ApiErrorTest, ReadsGooglesEnvelope) {
  Status s = StatusFromReply(
      400, R"({"error":{"code":400,"message":"field x is bad","status":"INVALID_ARGUMENT"}})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "field x is bad");
  s = StatusFromReply(409, R"({"error":{"code":409,"message":"dup","status":"ALREADY_EXISTS"}})");
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  s = StatusFromReply(502, "<html>bad gateway</html>");
  EXPECT_EQ(s.code(), StatusCode::kUnknown);
  EXPECT_EQ(s.message(), "HTTP 502: <html>bad gateway</html>");
  s = StatusFromReply(500, R"({"error":{"code":500,"status":"WHATEVER"}})");
  EXPECT_EQ(s.code(), StatusCode::kUnknown);
  EXPECT_EQ(s.message(), "HTTP 500");
  EXPECT_EQ(StatusCodeFromName("FAILED_PRECONDITION"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(StatusCodeFromName("nope"), StatusCode::kUnknown);
}

TEST(ApiErrorTest, UrlEncodeKeepsUnreservedCharacters) {
  EXPECT_EQ(UrlEncode("my-tpu_1.x~"), "my-tpu_1.x~");
  EXPECT_EQ(UrlEncode("a b/c=d"), "a%20b%2Fc%3Dd");
}

}  // namespace
}  // namespace tpuemu::cli
