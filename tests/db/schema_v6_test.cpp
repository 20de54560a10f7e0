// Schema v6 (counters, utilization runs) on a store written by v4: the counter tables start from
// the rows already there, and the old one-row-per-pass utilization samples read back unchanged as
// one-tick runs.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "db/migrations.h"
#include "db/node_repository.h"
#include "db/stats_repository.h"
#include "db/utilization_repository.h"
#include "tests/db/temp_dir.h"

namespace tpuemu::db {
namespace {

TEST(SchemaV6Test, CountersAndUtilizationFromAVersion4Store) {
  testing::TempDir dir;
  const std::string path = dir.File("v4.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(Migrate(db, Migrations().first(4)).ok());
    const char* rows = R"sql(
      INSERT INTO nodes (name, project, zone, node_id, uid, state, accelerator_type, tensorcores,
        create_time, update_time, resource_json, zone_tensorcores, queued_resource) VALUES
        ('n1', 'p', 'z', 'n1', 'u', 'READY', 'v4-8', 4, '', '', '{}', 4, NULL),
        ('n2', 'p', 'z', 'n2', 'u', 'READY', 'v4-8', 4, '', '', '{}', 0, NULL),
        ('n3', 'p', 'z', 'n3', 'u', 'CREATING', 'v4-8', 4, '', '', '{}', 0, 'q');
      INSERT INTO queued_resources (name, project, zone, queued_resource_id, state, tensorcores,
        held_tensorcores, create_time, update_time, resource_json) VALUES
        ('q', 'p', 'z', 'q', 'ACTIVE', 4, 4, '', '', '{}');
      INSERT INTO utilization_samples VALUES ('n1', 100, 0.5, 0.25, 0.125, 10, 20),
        ('n1', 200, 0.5, 0.25, 0.125, 10, 20), ('n2', 200, 1, 1, 1, 20, 20);
    )sql";
    ASSERT_EQ(sqlite3_exec(db, rows, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  std::unique_ptr<Store> store = std::move(Store::Open(path).value());
  NodeRepository nodes(*store);
  auto sum = [&](auto read) { return store->ReadResult<int64_t>(read).value(); };
  EXPECT_EQ(sum([&](Txn& txn) { return nodes.SumStandaloneTensorCores(txn, "p"); }), 8);
  EXPECT_EQ(sum([&](Txn& txn) { return nodes.SumTensorCoresInZone(txn, "z"); }), 4);
  auto counts = StatsRepository(*store).CountNodesByStateAndType();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)[std::make_pair(std::string("READY"), std::string("v4-8"))], 2);
  EXPECT_EQ((*counts)[std::make_pair(std::string("CREATING"), std::string("v4-8"))], 1);

  UtilizationRepository samples(*store);
  Result<std::vector<UtilizationRow>> n1 = samples.List("n1", 0);
  ASSERT_TRUE(n1.ok());
  EXPECT_EQ(*n1, (std::vector<UtilizationRow>{{"n1", 100, 0.5, 0.25, 0.125, 10, 20},
                                              {"n1", 200, 0.5, 0.25, 0.125, 10, 20}}));
  EXPECT_EQ(samples.List("n2", 0)->size(), 1u);
}

}  // namespace
}  // namespace tpuemu::db
