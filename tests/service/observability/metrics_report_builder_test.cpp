// MetricsReportBuilder: what the stored job data becomes in the torch_xla report — the emulated
// step time as ExecuteTime, transfers over the modelled host link, sample times from the compile's
// end plus each step's host time, and the result_json fallback for jobs from before schema v3.
#include "service/observability/metrics_report_builder.h"

#include <gtest/gtest.h>

#include "db/job_program_repository.h"
#include "service/catalog/catalog.h"
#include "service/observability/transfer_model.h"

#include "engine/chip/host_link.h"

namespace tpuemu::service {
namespace {

db::JobRow JobRowOf(const std::string& id) {
  db::JobRow j;
  j.project = "p";
  j.zone = "us-central2-b";
  j.node_id = "n";
  j.job_id = id;
  j.name = "projects/p/locations/us-central2-b/nodes/n/jobs/" + id;
  j.state = "SUCCEEDED";
  j.spec_hash = "h";
  j.create_time = "2026-01-01T00:00:00Z";
  j.start_time = "2026-01-01T00:00:01.000000Z";
  return j;
}

class MetricsReportBuilderTest : public ::testing::Test {
 protected:
  void Store(const db::JobRow& job, int steps, const db::JobProgramRow* program) {
    db::JobRepository jobs(*store_);
    ASSERT_TRUE(store_
                    ->Transaction([&](db::Txn& txn) -> Status {
                      TPUEMU_RETURN_IF_ERROR(jobs.Insert(txn, job).status());
                      for (int i = 0; i < steps; ++i) {
                        // 1 ms of emulated device time, 0.5 s of host time per step.
                        TPUEMU_RETURN_IF_ERROR(jobs.AppendStep(
                            txn, job.name, db::JobStepRow{i, {}, 1000, 1e-3, 0.5, 1e9, 0.5}));
                      }
                      if (program) return db::JobProgramRepository(*store_).Put(txn, *program);
                      return Status::Ok();
                    })
                    .ok());
  }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  Scheduler scheduler_;
  WritePath writes_{*store_, Catalog::Default(), {}};
  NodeManager nodes_{*store_, writes_, scheduler_, Catalog::Default(), {}};
  MetricsReportBuilder builder_{*store_, nodes_};
};

TEST(ParseRfc3339NsTest, UtcAndOffsets) {
  EXPECT_EQ(ParseRfc3339Ns("1970-01-01T00:00:01.5Z"), 1500000000);
  EXPECT_EQ(ParseRfc3339Ns("2026-01-01T00:00:00.000001Z"), 1767225600000001000);
  EXPECT_EQ(ParseRfc3339Ns("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_FALSE(ParseRfc3339Ns("yesterday").has_value());
  EXPECT_FALSE(ParseRfc3339Ns("1970-01-01T00:00:00").has_value());
}

TEST_F(MetricsReportBuilderTest, StepsBecomeExecuteAndTransferSamplesOnTheHostTimeline) {
  db::JobRow job = JobRowOf("a");
  // 1 ms each way per step over the chip model's host link (its node is gone: the fallback's).
  const auto bytes = static_cast<int64_t>(engine::cost::HostLinkBytesPerSecond(kTransferFallback) *
                                          engine::kDefaultEfficiency.host / 1000);
  db::JobProgramRow program{job.name, false, 0.25, 1767225601000000000, 1, 1 << 20, bytes, bytes};
  Store(job, 4, &program);
  Result<std::string> report = builder_.ForJob(job.name);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  // Steps end 0.5, 1.0, 1.5, 2.0 s after the compile: 4 samples over 1.5 s.
  const std::string execute =
      "Metric: ExecuteTime\n"
      "  TotalSamples: 4\n"
      "  Accumulator: 004ms000.000us\n"
      // 2.667 ms per second, in torch's rounding quirk: the ms part prints rounded (003), the
      // remainder after floor(2) stays 666.667 us.
      "  ValueRate: 003ms666.667us / second\n"
      "  Rate: 2.66667 / second\n";
  EXPECT_NE(report->find(execute), std::string::npos) << *report;
  EXPECT_NE(report->find("Metric: TransferToDeviceTime\n  TotalSamples: 4\n"
                         "  Accumulator: 004ms000.000us\n"),
            std::string::npos)
      << *report;
  // 4 x 12.75 MB (1.5e10 B/s x Efficiency::host for a millisecond) = 48.64 MiB.
  EXPECT_NE(report->find("Metric: InboundData\n  TotalSamples: 4\n  Accumulator: 48.64MB\n"),
            std::string::npos)
      << *report;
  EXPECT_NE(report->find("Metric: CompileTime\n  TotalSamples: 1\n  Accumulator: 250ms000.000us\n"),
            std::string::npos)
      << *report;
  EXPECT_NE(report->find("Counter: MarkStep\n  Value: 4\n"), std::string::npos) << *report;
  EXPECT_NE(report->find("Counter: CreateCompileHandles\n  Value: 1\n"), std::string::npos);
}

TEST_F(MetricsReportBuilderTest, JobsFromBeforeSchemaV3UseTheirResult) {
  db::JobRow hit = JobRowOf("old-hit");
  hit.result_json = R"({"metrics": {"compileCacheHit": true, "compileSeconds": 0}})";
  db::JobRow miss = JobRowOf("old-miss");
  miss.result_json = R"({"metrics": {"compileCacheHit": false, "compileSeconds": 0.5}})";
  Store(hit, 1, nullptr);
  Store(miss, 1, nullptr);
  Result<std::string> report = builder_.ForNode({"p", "us-central2-b", "n"});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_NE(report->find("Counter: CachedCompile\n  Value: 1\n"), std::string::npos) << *report;
  EXPECT_NE(report->find("Counter: UncachedCompile\n  Value: 1\n"), std::string::npos) << *report;
  EXPECT_NE(report->find("Metric: CompileTime\n  TotalSamples: 1\n  Accumulator: 500ms000.000us\n"),
            std::string::npos)
      << *report;
  // No transfer sizes were recorded then: no transfer metrics rather than made-up ones.
  EXPECT_EQ(report->find("TransferToDeviceTime"), std::string::npos) << *report;
  EXPECT_EQ(builder_.ForJob(JobRowOf("nope").name).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(builder_.ForNode({"p", "us-central2-b", "empty"}).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace tpuemu::service
