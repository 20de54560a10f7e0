#include "db/operation_repository.h"

#include <gtest/gtest.h>

#include "db/node_repository.h"
#include "tests/db/rows.h"
#include "tests/support/test_store.h"

namespace tpuemu::db {
namespace {

using testing::MakeNode;
using testing::MakeOperation;

class OperationRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Store>> store = Store::Open(::tpuemu::testing::TestStoreLocation());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    ops_ = std::make_unique<OperationRepository>(*store_);
  }
  Result<int64_t> Insert(const OperationRow& row) {
    Result<int64_t> seq = Status::Internal("unset");
    Status s = store_->Transaction([&](Txn& txn) {
      seq = ops_->Insert(txn, row);
      return seq.status();
    });
    if (!s.ok()) return s;
    return seq;
  }
  static std::vector<std::string> Names(const std::vector<OperationRow>& rows) {
    std::vector<std::string> names;
    for (const OperationRow& r : rows) names.push_back(r.name.substr(r.name.rfind('/') + 1));
    return names;
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<OperationRepository> ops_;
};

TEST_F(OperationRepositoryTest, InsertGetUpdateDelete) {
  OperationRow row = MakeOperation("p", "z", "op1", "projects/p/locations/z/nodes/n1");
  Result<int64_t> seq = Insert(row);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  row.seq = *seq;
  Result<OperationRow> got = ops_->Get(row.name);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, row);
  EXPECT_FALSE(got->done);
  EXPECT_FALSE(got->error_code.has_value());

  row.done = true;
  row.cancel_requested = true;
  row.end_time = "2025-01-01T00:02:00Z";
  row.error_code = 1;
  row.error_message = "cancelled";
  row.seq = 999;  // ignored
  ASSERT_TRUE(store_->Transaction([&](Txn& txn) { return ops_->Update(txn, row); }).ok());
  got = ops_->Get(row.name);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->done);
  EXPECT_TRUE(got->cancel_requested);
  EXPECT_EQ(got->end_time, "2025-01-01T00:02:00Z");
  EXPECT_EQ(got->error_code, 1);
  EXPECT_EQ(got->error_message, "cancelled");
  EXPECT_FALSE(got->response_json.has_value());
  EXPECT_EQ(got->seq, *seq);

  ASSERT_TRUE(store_->Transaction([&](Txn& txn) { return ops_->Delete(txn, row.name); }).ok());
  EXPECT_EQ(ops_->Get(row.name).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Transaction([&](Txn& txn) { return ops_->Delete(txn, row.name); }).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->Transaction([&](Txn& txn) { return ops_->Update(txn, row); }).code(),
            StatusCode::kNotFound);
}

TEST_F(OperationRepositoryTest, DuplicateIsAlreadyExists) {
  ASSERT_TRUE(Insert(MakeOperation("p", "z", "op1")).ok());
  EXPECT_EQ(Insert(MakeOperation("p", "z", "op1")).status().code(), StatusCode::kAlreadyExists);
}

TEST_F(OperationRepositoryTest, ListByZoneAndAllZonesInSeqOrder) {
  ASSERT_TRUE(Insert(MakeOperation("p", "z1", "a")).ok());
  ASSERT_TRUE(Insert(MakeOperation("p", "z2", "b")).ok());
  ASSERT_TRUE(Insert(MakeOperation("p", "z1", "c")).ok());
  ASSERT_TRUE(Insert(MakeOperation("q", "z1", "d")).ok());
  EXPECT_EQ(Names(*ops_->List("p", "z1", 0, 10)), (std::vector<std::string>{"a", "c"}));
  Result<std::vector<OperationRow>> first = ops_->List("p", "-", 0, 2);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(Names(*first), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Names(*ops_->List("p", "-", first->back().seq, 2)), (std::vector<std::string>{"c"}));
}

TEST_F(OperationRepositoryTest, NodeAndOperationCommitOrFailTogether) {
  NodeRepository nodes(*store_);
  ASSERT_TRUE(Insert(MakeOperation("p", "z", "op1")).ok());
  // The operation name collides, so the node written first in the same txn must vanish too.
  Status s = store_->Transaction([&](Txn& txn) -> Status {
    TPUEMU_RETURN_IF_ERROR(nodes.Insert(txn, MakeNode("p", "z", "n1")).status());
    return ops_->Insert(txn, MakeOperation("p", "z", "op1")).status();
  });
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(nodes.Get("projects/p/locations/z/nodes/n1").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tpuemu::db
