#include "api/google_error.h"

#include <gtest/gtest.h>

namespace tpuemu::api {
namespace {

TEST(GoogleErrorTest, HttpStatusForEveryCanonicalCode) {
  const std::pair<StatusCode, int> table[] = {
      {StatusCode::kOk, 200},
      {StatusCode::kInvalidArgument, 400},
      {StatusCode::kFailedPrecondition, 400},
      {StatusCode::kOutOfRange, 400},
      {StatusCode::kUnauthenticated, 401},
      {StatusCode::kPermissionDenied, 403},
      {StatusCode::kNotFound, 404},
      {StatusCode::kAlreadyExists, 409},
      {StatusCode::kAborted, 409},
      {StatusCode::kResourceExhausted, 429},
      {StatusCode::kCancelled, 499},
      {StatusCode::kUnknown, 500},
      {StatusCode::kInternal, 500},
      {StatusCode::kDataLoss, 500},
      {StatusCode::kUnimplemented, 501},
      {StatusCode::kUnavailable, 503},
      {StatusCode::kDeadlineExceeded, 504},
  };
  for (const auto& [code, http] : table) {
    EXPECT_EQ(HttpStatusFor(code), http) << StatusCodeName(code);
    if (code == StatusCode::kOk) continue;
    HttpResponse response = ErrorResponse(Status(code, "boom"));
    EXPECT_EQ(response.status, http) << StatusCodeName(code);
    nlohmann::json body = nlohmann::json::parse(response.body);
    EXPECT_EQ(body["error"]["code"], http);
    EXPECT_EQ(body["error"]["status"], StatusCodeName(code));
  }
}

TEST(GoogleErrorTest, EnvelopeHasGoogleShape) {
  HttpResponse response =
      ErrorResponse(Status::NotFound("Resource 'projects/p/locations/z/nodes/x' was not found"));
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.content_type, "application/json");
  nlohmann::json expected = nlohmann::json::parse(R"({"error":{
      "code":404,
      "message":"Resource 'projects/p/locations/z/nodes/x' was not found",
      "status":"NOT_FOUND",
      "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"NOT_FOUND",
                  "domain":"tpu.googleapis.com","metadata":{}}]}})");
  EXPECT_EQ(nlohmann::json::parse(response.body), expected);
}

TEST(GoogleErrorTest, ExplicitHttpStatusKeepsCanonicalName) {
  HttpResponse response = ErrorResponse(413, Status::InvalidArgument("too big"));
  EXPECT_EQ(response.status, 413);
  nlohmann::json body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["error"]["code"], 413);
  EXPECT_EQ(body["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_EQ(body["error"]["message"], "too big");
}

TEST(GoogleErrorTest, OkStatusIsReportedAsInternalNotSuccess) {
  HttpResponse response = ErrorResponse(Status::Ok());
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(nlohmann::json::parse(response.body)["error"]["status"], "INTERNAL");
}

TEST(GoogleErrorTest, MessageWithInvalidUtf8StillSerializes) {
  HttpResponse response = ErrorResponse(Status::InvalidArgument("bad id '\xff\xfe'"));
  EXPECT_EQ(response.status, 400);
  EXPECT_FALSE(nlohmann::json::parse(response.body, nullptr, false).is_discarded());
}

TEST(GoogleErrorTest, RetryLaterIs429WithRetryInfoAndRetryAfter) {
  HttpResponse response = RetryLaterResponse("the store is behind", 1250);
  EXPECT_EQ(response.status, 429);
  nlohmann::json error = nlohmann::json::parse(response.body)["error"];
  EXPECT_EQ(error["status"], "RESOURCE_EXHAUSTED");
  ASSERT_EQ(error["details"].size(), 2u);
  EXPECT_EQ(error["details"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
  EXPECT_EQ(error["details"][1],
            (nlohmann::json{{"@type", "type.googleapis.com/google.rpc.RetryInfo"},
                            {"retryDelay", "1.250s"}}));
  ASSERT_EQ(response.headers.size(), 1u);
  EXPECT_EQ(response.headers[0], (std::pair<std::string, std::string>{"Retry-After", "2"}));
}

}  // namespace
}  // namespace tpuemu::api
