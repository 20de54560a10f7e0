#include "db/node_repository.h"

#include <gtest/gtest.h>

#include "tests/db/rows.h"
#include "tests/db/temp_dir.h"
#include "tests/support/test_store.h"

namespace tpuemu::db {
namespace {

using testing::MakeNode;
using testing::TempDir;

class NodeRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    Result<std::unique_ptr<Store>> store = Store::Open(location_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    nodes_ = std::make_unique<NodeRepository>(*store_);
  }
  void Reopen() {
    nodes_.reset();
    ASSERT_TRUE(store_->Close().ok());
    store_.reset();
    Open();
  }

  Result<int64_t> Insert(const NodeRow& row) {
    Result<int64_t> seq = Status::Internal("unset");
    Status s = store_->Transaction([&](Txn& txn) {
      seq = nodes_->Insert(txn, row);
      return seq.status();
    });
    if (!s.ok()) return s;
    return seq;
  }
  Status Write(const std::function<Status(Txn&)>& body) { return store_->Transaction(body); }

  static std::vector<std::string> Ids(const std::vector<NodeRow>& rows) {
    std::vector<std::string> ids;
    for (const NodeRow& r : rows) ids.push_back(r.node_id);
    return ids;
  }

  TempDir dir_;
  const std::string location_ = ::tpuemu::testing::TestStoreLocation(dir_.File("nodes.db"));
  std::unique_ptr<Store> store_;
  std::unique_ptr<NodeRepository> nodes_;
};

TEST_F(NodeRepositoryTest, InsertThenGetRoundTripsEveryColumn) {
  NodeRow row = MakeNode("p", "us-central2-b", "n1", 32);
  row.pending_operation = "projects/p/locations/us-central2-b/operations/op1";
  row.pending_due_ms = 1735689600123;
  row.resource_json = R"({"name":"x","labels":{"a":"ü"}})";
  row.resource_json += std::string("\0tail", 5);  // embedded NUL must survive, or be refused
  if (::tpuemu::testing::TestStoreIsPostgres()) {
    // PostgreSQL's text cannot hold NUL (JSON text never has one: it is written \u0000).
    EXPECT_EQ(Insert(row).status().code(), StatusCode::kInvalidArgument);
    row.resource_json.resize(row.resource_json.size() - 5);
  }
  Result<int64_t> seq = Insert(row);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_GT(*seq, 0);
  row.seq = *seq;
  Result<NodeRow> got = nodes_->Get(row.name);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, row);
}

TEST_F(NodeRepositoryTest, MissingNodeIsNotFound) {
  EXPECT_EQ(nodes_->Get("projects/p/locations/z/nodes/none").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Write([&](Txn& txn) { return nodes_->Update(txn, MakeNode("p", "z", "none")); }).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Write([&](Txn& txn) {
              return nodes_->Delete(txn, "projects/p/locations/z/nodes/none");
            }).code(),
            StatusCode::kNotFound);
}

TEST_F(NodeRepositoryTest, DuplicateNameIsAlreadyExistsAndLeavesOriginal) {
  ASSERT_TRUE(Insert(MakeNode("p", "z", "n1", 8)).ok());
  Result<int64_t> dup = Insert(MakeNode("p", "z", "n1", 64));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(dup.status().message().find("projects/p/locations/z/nodes/n1"), std::string::npos);
  EXPECT_EQ(nodes_->Get("projects/p/locations/z/nodes/n1")->tensorcores, 8);
}

TEST_F(NodeRepositoryTest, UpdateChangesColumnsButNotSeq) {
  Result<int64_t> seq = Insert(MakeNode("p", "z", "n1"));
  ASSERT_TRUE(seq.ok());
  NodeRow row = MakeNode("p", "z", "n1");
  row.state = "READY";
  row.update_time = "2025-01-01T00:01:00Z";
  row.pending_operation = "op";
  row.pending_due_ms = 5;
  row.seq = 12345;  // ignored
  ASSERT_TRUE(Write([&](Txn& txn) { return nodes_->Update(txn, row); }).ok());
  Result<NodeRow> got = nodes_->Get(row.name);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, "READY");
  EXPECT_EQ(got->update_time, "2025-01-01T00:01:00Z");
  EXPECT_EQ(got->pending_due_ms, 5);
  EXPECT_EQ(got->seq, *seq);

  row.pending_operation.reset();
  row.pending_due_ms.reset();
  ASSERT_TRUE(Write([&](Txn& txn) { return nodes_->Update(txn, row); }).ok());
  got = nodes_->Get(row.name);
  EXPECT_FALSE(got->pending_operation.has_value());
  EXPECT_FALSE(got->pending_due_ms.has_value());
}

TEST_F(NodeRepositoryTest, DeleteRemovesRow) {
  ASSERT_TRUE(Insert(MakeNode("p", "z", "n1")).ok());
  ASSERT_TRUE(
      Write([&](Txn& txn) { return nodes_->Delete(txn, "projects/p/locations/z/nodes/n1"); }).ok());
  EXPECT_EQ(nodes_->Get("projects/p/locations/z/nodes/n1").status().code(), StatusCode::kNotFound);
}

TEST_F(NodeRepositoryTest, ListPagesInSeqOrderStableAcrossDeletes) {
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(Insert(MakeNode("p", "z", "n" + std::to_string(i))).ok());
  ASSERT_TRUE(Insert(MakeNode("p", "other-zone", "x")).ok());
  ASSERT_TRUE(Insert(MakeNode("q", "z", "y")).ok());

  Result<std::vector<NodeRow>> page1 = nodes_->List("p", "z", 0, 4);
  ASSERT_TRUE(page1.ok());
  EXPECT_EQ(Ids(*page1), (std::vector<std::string>{"n0", "n1", "n2", "n3"}));

  // Deleting rows on both sides of the cursor neither repeats nor skips any survivor.
  ASSERT_TRUE(Write([&](Txn& txn) -> Status {
                TPUEMU_RETURN_IF_ERROR(nodes_->Delete(txn, "projects/p/locations/z/nodes/n1"));
                return nodes_->Delete(txn, "projects/p/locations/z/nodes/n5");
              }).ok());
  Result<std::vector<NodeRow>> page2 = nodes_->List("p", "z", page1->back().seq, 4);
  ASSERT_TRUE(page2.ok());
  EXPECT_EQ(Ids(*page2), (std::vector<std::string>{"n4", "n6", "n7", "n8"}));
  Result<std::vector<NodeRow>> page3 = nodes_->List("p", "z", page2->back().seq, 4);
  ASSERT_TRUE(page3.ok());
  EXPECT_EQ(Ids(*page3), (std::vector<std::string>{"n9"}));

  Result<std::vector<NodeRow>> all_zones = nodes_->List("p", NodeRepository::kAllZones, 0, 0);
  ASSERT_TRUE(all_zones.ok());
  EXPECT_EQ(all_zones->size(), 9u);
  EXPECT_EQ(all_zones->back().node_id, "x");
  EXPECT_EQ(Ids(*nodes_->List("q", "-", 0, 10)), (std::vector<std::string>{"y"}));
  EXPECT_TRUE(nodes_->List("nobody", "-", 0, 10)->empty());
}

// ListNames is List's page, names only: same rows, same order, same zone and limit rules.
TEST_F(NodeRepositoryTest, ListNamesMatchesListPageByPage) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(Insert(MakeNode("p", i % 3 == 0 ? "z2" : "z", "n" + std::to_string(i))).ok());
  }
  ASSERT_TRUE(Insert(MakeNode("q", "z", "y")).ok());
  ASSERT_TRUE(
      Write([&](Txn& txn) { return nodes_->Delete(txn, "projects/p/locations/z/nodes/n2"); }).ok());
  for (std::string_view zone : {std::string_view("z"), NodeRepository::kAllZones}) {
    for (int limit : {0, 1, 2, 3, 100}) {
      int64_t after = 0;
      for (int page = 0; page < 10; ++page) {
        Result<std::vector<NodeRow>> rows = nodes_->List("p", zone, after, limit);
        Result<std::vector<std::string>> names = nodes_->ListNames("p", zone, after, limit);
        ASSERT_TRUE(rows.ok() && names.ok());
        std::vector<std::string> expected;
        for (const NodeRow& row : *rows) expected.push_back(row.name);
        EXPECT_EQ(*names, expected) << zone << " limit " << limit << " after " << after;
        if (rows->empty() || limit == 0) break;
        after = rows->back().seq;
      }
    }
  }
  EXPECT_EQ(*nodes_->ListNames("p", "z", 0, 2),
            (std::vector<std::string>{"projects/p/locations/z/nodes/n1",
                                      "projects/p/locations/z/nodes/n4"}));
  EXPECT_TRUE(nodes_->ListNames("nobody", "-", 0, 10)->empty());
}

TEST_F(NodeRepositoryTest, SeqNeverRepeatsAfterDeleteAndRestart) {
  Result<int64_t> a = Insert(MakeNode("p", "z", "a"));
  Result<int64_t> b = Insert(MakeNode("p", "z", "b"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(*a, *b);
  ASSERT_TRUE(
      Write([&](Txn& txn) { return nodes_->Delete(txn, "projects/p/locations/z/nodes/b"); }).ok());
  Reopen();
  Result<int64_t> c = Insert(MakeNode("p", "z", "c"));
  ASSERT_TRUE(c.ok());
  EXPECT_GT(*c, *b);
}

TEST_F(NodeRepositoryTest, ListPendingReturnsOnlyPendingSoonestFirst) {
  NodeRow late = MakeNode("p", "z", "late");
  late.pending_operation = "op-late";
  late.pending_due_ms = 2000;
  NodeRow soon = MakeNode("p", "z2", "soon");
  soon.pending_operation = "op-soon";
  soon.pending_due_ms = 1000;
  ASSERT_TRUE(Insert(late).ok());
  ASSERT_TRUE(Insert(MakeNode("p", "z", "idle")).ok());
  ASSERT_TRUE(Insert(soon).ok());
  Result<std::vector<NodeRow>> pending = nodes_->ListPending();
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(Ids(*pending), (std::vector<std::string>{"soon", "late"}));
  EXPECT_EQ((*pending)[0].pending_operation, "op-soon");
}

TEST_F(NodeRepositoryTest, SumTensorCoresAndCountByState) {
  ASSERT_TRUE(Insert(MakeNode("p", "z1", "a", 8)).ok());
  ASSERT_TRUE(Insert(MakeNode("p", "z1", "b", 32)).ok());
  NodeRow ready = MakeNode("p", "z2", "c", 4);
  ready.state = "READY";
  ASSERT_TRUE(Insert(ready).ok());
  ASSERT_TRUE(Insert(MakeNode("q", "z1", "d", 100)).ok());
  EXPECT_EQ(*nodes_->SumTensorCores("p", "z1"), 40);
  EXPECT_EQ(*nodes_->SumTensorCores("p", "-"), 44);
  EXPECT_EQ(*nodes_->SumTensorCores("nobody", "-"), 0);
  Result<std::map<std::string, int64_t>> counts = nodes_->CountByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::map<std::string, int64_t>{{"CREATING", 3}, {"READY", 1}}));
}

TEST_F(NodeRepositoryTest, QuotaCheckAndInsertInOneTransaction) {
  constexpr int64_t kQuota = 16;
  auto create = [&](const std::string& id) {
    return Write([&](Txn& txn) -> Status {
      Result<int64_t> used = nodes_->SumTensorCores(txn, "p", "-");
      if (!used.ok()) return used.status();
      if (*used + 8 > kQuota) return Status::Internal("quota");
      return nodes_->Insert(txn, MakeNode("p", "z", id, 8)).status();
    });
  };
  EXPECT_TRUE(create("a").ok());
  EXPECT_TRUE(create("b").ok());
  EXPECT_EQ(create("c").code(), StatusCode::kInternal);
  EXPECT_EQ(nodes_->List("p", "-", 0, 0)->size(), 2u);
}

}  // namespace
}  // namespace tpuemu::db
