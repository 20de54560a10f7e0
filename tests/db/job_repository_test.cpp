#include "db/job_repository.h"

#include <gtest/gtest.h>

#include "tests/db/temp_dir.h"
#include "tests/support/test_store.h"

namespace tpuemu::db {
namespace {

using testing::TempDir;

JobRow MakeJob(const std::string& node, const std::string& id) {
  JobRow row;
  row.project = "p";
  row.zone = "z";
  row.node_id = node;
  row.job_id = id;
  row.name = "projects/p/locations/z/nodes/" + node + "/jobs/" + id;
  row.state = "QUEUED";
  row.spec_hash = "h";
  row.create_time = "2026-01-01T00:00:00Z";
  return row;
}

class JobRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    Result<std::unique_ptr<Store>> store = Store::Open(location_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    jobs_ = std::make_unique<JobRepository>(*store_);
  }
  void Reopen() {
    jobs_.reset();
    ASSERT_TRUE(store_->Close().ok());
    store_.reset();
    Open();
  }
  Status Insert(const JobRow& row) {
    return store_->Transaction([&](Txn& txn) -> Status {
      Result<int64_t> seq = jobs_->Insert(txn, row);
      return seq.ok() ? Status::Ok() : seq.status();
    });
  }

  TempDir dir_;
  const std::string location_ = ::tpuemu::testing::TestStoreLocation(dir_.File("jobs.db"));
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobRepository> jobs_;
};

TEST_F(JobRepositoryTest, InsertGetUpdateSurviveReopen) {
  JobRow row = MakeJob("n1", "j1");
  row.request_id = "r1";
  ASSERT_TRUE(Insert(row).ok());
  EXPECT_EQ(Insert(row).code(), StatusCode::kAlreadyExists);
  Result<JobRow> got = jobs_->Get(row.name);
  ASSERT_TRUE(got.ok());
  EXPECT_GT(got->seq, 0);
  row.seq = got->seq;
  EXPECT_EQ(*got, row);

  row.state = "SUCCEEDED";
  row.exit_code = 0;
  row.reason = "done";
  row.result_json = R"({"finalLoss":0.5})";
  ASSERT_TRUE(store_->Transaction([&](Txn& txn) { return jobs_->Update(txn, row); }).ok());
  Reopen();
  got = jobs_->Get(row.name);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, row);
  EXPECT_EQ(jobs_->Get("projects/p/locations/z/nodes/n1/jobs/nope").status().code(),
            StatusCode::kNotFound);
}

// Update writes what a run changes and leaves what Insert set: a row given other identity or
// spec values changes only its lifecycle columns.
TEST_F(JobRepositoryTest, UpdateChangesOnlyTheLifecycleColumns) {
  JobRow row = MakeJob("n1", "j1");
  ASSERT_TRUE(Insert(row).ok());
  Result<JobRow> inserted = jobs_->Get(row.name);
  ASSERT_TRUE(inserted.ok());
  JobRow changed = *inserted;
  changed.state = "RUNNING";
  changed.start_time = "2026-01-02T03:04:05Z";
  changed.attempt = 2;
  changed.owner = "replica-b";
  changed.result_json = R"({"profile":{}})";
  JobRow ignored = changed;
  ignored.priority = inserted->priority + 7;
  ignored.labels_json = R"({"other":"labels"})";
  ignored.spec_json = R"({"other":"spec"})";
  ignored.max_retries = inserted->max_retries + 3;
  ASSERT_TRUE(store_->Transaction([&](Txn& txn) { return jobs_->Update(txn, ignored); }).ok());
  Result<JobRow> got = jobs_->Get(row.name);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, changed);
}

TEST_F(JobRepositoryTest, RequestIdIsUniquePerNode) {
  JobRow a = MakeJob("n1", "a");
  a.request_id = "same";
  JobRow b = MakeJob("n1", "b");
  b.request_id = "same";
  JobRow c = MakeJob("n2", "c");
  c.request_id = "same";
  ASSERT_TRUE(Insert(a).ok());
  EXPECT_EQ(Insert(b).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(Insert(c).ok());
  Result<JobRow> found = store_->ReadResult<JobRow>(
      [&](Txn& txn) { return jobs_->GetByRequestId(txn, "p", "z", "n1", "same"); });
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->job_id, "a");
}

TEST_F(JobRepositoryTest, ListFiltersAndPages) {
  for (int i = 0; i < 5; ++i) {
    JobRow row = MakeJob(i % 2 == 0 ? "even" : "odd", "j" + std::to_string(i));
    if (i == 3) row.state = "RUNNING";
    ASSERT_TRUE(Insert(row).ok());
  }
  JobFilter all{"p", "-", "", ""};
  Result<std::vector<JobRow>> page = jobs_->List(all, 0, 2);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].job_id, "j0");
  page = jobs_->List(all, page->back().seq, 0);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->size(), 3u);
  page = jobs_->List(JobFilter{"p", "z", "even", ""}, 0, 0);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->size(), 3u);
  Result<std::vector<JobRow>> running = jobs_->ListInState("RUNNING");
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].job_id, "j3");
}

TEST_F(JobRepositoryTest, LogsAndStepsRoundTripAndDeleteWithTheJob) {
  JobRow row = MakeJob("n1", "j1");
  ASSERT_TRUE(Insert(row).ok());
  JobStepRow s0{0, 2.25, 1000, 1.5e-6, 0.75, 3e9, 0.01};
  JobStepRow s1{1, std::nullopt, 2000, 3e-6, 0.5, 6e9, 0.02};
  ASSERT_TRUE(store_
                  ->Transaction([&](Txn& txn) -> Status {
                    TPUEMU_RETURN_IF_ERROR(jobs_->AppendLog(txn, row.name, "compile"));
                    TPUEMU_RETURN_IF_ERROR(jobs_->AppendLog(txn, row.name, "step 0"));
                    TPUEMU_RETURN_IF_ERROR(jobs_->AppendStep(txn, row.name, s0));
                    return jobs_->AppendStep(txn, row.name, s1);
                  })
                  .ok());
  Reopen();
  Result<std::vector<std::string>> logs = jobs_->Logs(row.name, 1);
  ASSERT_TRUE(logs.ok());
  EXPECT_EQ(*logs, std::vector<std::string>{"step 0"});
  Result<std::vector<JobStepRow>> steps = jobs_->Steps(row.name);
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0], s0);
  EXPECT_EQ((*steps)[1], s1);
  ASSERT_TRUE(store_->Transaction([&](Txn& txn) { return jobs_->Delete(txn, row.name); }).ok());
  EXPECT_TRUE(jobs_->Logs(row.name, 0)->empty());
  EXPECT_TRUE(jobs_->Steps(row.name)->empty());
}

}  // namespace
}  // namespace tpuemu::db
