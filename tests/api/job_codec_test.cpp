// api/job_codec.h: a jobs.submit request decoded into the typed submission JobManager takes, with
// ParseJobSpec's errors and the daemon's limits.
#include "api/job_codec.h"

#include <gtest/gtest.h>

namespace tpuemu::api {
namespace {

using nlohmann::json;

const service::NodeKey kNode{"p", "us-central2-b", "n"};

TEST(JobCodecTest, DecodesTheBodyAndTheJobId) {
  const json body = json::parse(R"({"workload": {"mlp": {"steps": 3}}, "priority": 2,
                                     "labels": {"team": "a"}, "requestId": "r-1"})");
  Result<service::JobSubmission> s = DecodeJobSubmission(kNode, body, "j1", {});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->node.Name(), kNode.Name());
  EXPECT_EQ(s->job_id, "j1");
  EXPECT_EQ(s->spec.kind, service::WorkloadKind::kMlp);
  EXPECT_EQ(s->spec.steps, 3);
  EXPECT_EQ(s->spec.priority, 2);
  EXPECT_EQ(s->spec.labels.at("team"), "a");
  EXPECT_EQ(s->spec.request_id, "r-1");
  // The canonical form (stored, hashed for requestId) is the one ParseJobSpec gives.
  EXPECT_EQ(service::JobSpecHash(s->spec), service::JobSpecHash(*service::ParseJobSpec(body)));
}

TEST(JobCodecTest, ErrorsAndLimitsAreTheSpecDecoders) {
  const json bad = json::parse(R"({"workload": {"mlp": {"layers": 0}}})");
  Result<service::JobSubmission> s = DecodeJobSubmission(kNode, bad, "", {});
  ASSERT_FALSE(s.ok());
  const Status expected = service::ParseJobSpec(bad).status();
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), expected.message());

  const json long_job = json::parse(R"({"workload": {"matmul": {}}, "steps": 20})");
  EXPECT_TRUE(DecodeJobSubmission(kNode, long_job, "", {}).ok());
  Result<service::JobSubmission> limited =
      DecodeJobSubmission(kNode, long_job, "", {.max_steps = 10});
  ASSERT_FALSE(limited.ok());
  EXPECT_NE(limited.status().message().find("steps"), std::string::npos)
      << limited.status().message();
}

}  // namespace
}  // namespace tpuemu::api
