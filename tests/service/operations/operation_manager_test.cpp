#include "service/operations/operation_manager.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tpuemu::service {
namespace {

constexpr char kOpsZone[] = "us-central2-b";

class OperationManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(db::Store::Open(":memory:").value());
    batcher_ = std::make_unique<WriteBatcher>(*store_);
    operations_ = std::make_unique<OperationManager>(*store_, *batcher_, Catalog::Default());
  }

  // Writes a running Operation the way a node transition does: Insert inside a batcher body.
  Operation Begin(const std::string& project, const std::string& node) {
    Operation op =
        NewOperation(project, kOpsZone,
                     "projects/" + project + "/locations/" + kOpsZone + "/nodes/" + node, "create");
    EXPECT_TRUE(batcher_->Run([&](db::Txn& txn) { return operations_->Insert(txn, op); }).ok());
    return op;
  }

  // Completes it the way a transition's completion does: Load, CompleteOperation, Update.
  void Finish(const std::string& name) {
    ASSERT_TRUE(batcher_
                    ->Run([&](db::Txn& txn) -> Status {
                      Result<Operation> op = operations_->Load(txn, name);
                      if (!op.ok()) return op.status();
                      CompleteOperation(*op, {{"@type", kEmptyType}});
                      return operations_->Update(txn, *op);
                    })
                    .ok());
  }

  std::unique_ptr<db::Store> store_;
  std::unique_ptr<WriteBatcher> batcher_;
  std::unique_ptr<OperationManager> operations_;
};

TEST_F(OperationManagerTest, InsertedOperationReadsBackAndCompletes) {
  Operation op = Begin("p", "n1");
  EXPECT_GT(op.seq, 0);
  EXPECT_EQ(op.name.rfind("projects/p/locations/us-central2-b/operations/operation-", 0), 0u);
  Result<Operation> read = operations_->Get(op.name);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_FALSE(read->done);
  EXPECT_EQ(read->target, "projects/p/locations/us-central2-b/nodes/n1");
  EXPECT_EQ(read->verb, "create");
  Finish(op.name);
  read = operations_->Get(op.name);
  EXPECT_TRUE(read->done);
  EXPECT_FALSE(read->end_time.empty());
  EXPECT_EQ(read->response["@type"], kEmptyType);
}

TEST_F(OperationManagerTest, UnknownNamesAreNotFoundNamingTheResource) {
  const std::string name = "projects/p/locations/us-central2-b/operations/nope";
  EXPECT_EQ(operations_->Get(name).status().message(), "Resource '" + name + "' was not found");
  EXPECT_EQ(operations_->Delete(name).code(), StatusCode::kNotFound);
  EXPECT_EQ(operations_->Cancel(name).code(), StatusCode::kNotFound);
}

TEST_F(OperationManagerTest, CancelMarksARunningOperationAndDeleteWaitsForTheEnd) {
  Operation op = Begin("p", "n1");
  Status running = operations_->Delete(op.name);
  EXPECT_EQ(running.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(running.message(),
            "Operation '" + op.name + "' is still running; wait for it or cancel it first.");
  EXPECT_TRUE(operations_->Cancel(op.name).ok());
  EXPECT_TRUE(operations_->Get(op.name)->cancel_requested);
  EXPECT_FALSE(operations_->Get(op.name)->done);   // best effort: it still runs to its end
  EXPECT_TRUE(operations_->Cancel(op.name).ok());  // again: no change
  Finish(op.name);
  EXPECT_TRUE(operations_->Get(op.name)->cancel_requested);  // kept through the completion
  EXPECT_TRUE(operations_->Delete(op.name).ok());
  EXPECT_EQ(operations_->Get(op.name).status().code(), StatusCode::kNotFound);
}

TEST_F(OperationManagerTest, ListPagesInCreationOrderPerProjectAndZone) {
  std::vector<std::string> want;
  for (int i = 0; i < 5; ++i) want.push_back(Begin("p", "n" + std::to_string(i)).name);
  Begin("other", "x");
  std::vector<std::string> seen;
  PageRequest page{.page_size = 2};
  int pages = 0;
  for (; pages < 10; ++pages) {
    Result<OperationPage> p = operations_->List("p", kOpsZone, page);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    for (const Operation& op : p->operations) seen.push_back(op.name);
    if (p->next_page_token.empty()) break;
    EXPECT_EQ(p->next_page_token[0], kSeqPageToken);
    page.page_token = p->next_page_token;
  }
  EXPECT_EQ(seen, want);
  EXPECT_EQ(pages, 2);  // 2 + 2 + 1
  EXPECT_EQ(operations_->List("p", "-", {})->operations.size(), 5u);
  EXPECT_EQ(operations_->List("p", kOpsZone, {.page_token = "garbage"}).status().message(),
            "Invalid value for field 'pageToken': 'garbage'");
  EXPECT_EQ(operations_->List("p", "mars-1", {}).status().message(),
            "Resource 'projects/p/locations/mars-1' was not found");
}

}  // namespace
}  // namespace tpuemu::service
