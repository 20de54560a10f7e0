// The change feed's payloads as the PostgreSQL triggers write them (db/postgres/migrations.cpp, v8)
// parsed into their typed changes (db/change_payloads.h).
#include "db/change_payloads.h"

#include <gtest/gtest.h>

namespace tpuemu::db {
namespace {

TEST(ChangePayloadsTest, AnEventIsItsProjectAndSeq) {
  Result<EventChange> e = ParseEventChange("proj-1 42");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->project, "proj-1");
  EXPECT_EQ(e->seq, 42);
}

TEST(ChangePayloadsTest, AnEventWithoutAnIntegerSeqIsInvalid) {
  for (const char* payload : {"", "proj", "proj ", "proj x1", "proj 1 2", "proj 12x"}) {
    Result<EventChange> e = ParseEventChange(payload);
    ASSERT_FALSE(e.ok()) << payload;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(e.status().message().find(kEventsChannel), std::string::npos);
  }
}

TEST(ChangePayloadsTest, AJobIsItsNameStateAndOwnerWhichMayBeEmpty) {
  Result<JobChange> j = ParseJobChange("projects/p/locations/z/nodes/n/jobs/j RUNNING replica-a");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->name, "projects/p/locations/z/nodes/n/jobs/j");
  EXPECT_EQ(j->state, "RUNNING");
  EXPECT_EQ(j->owner, "replica-a");

  // COALESCE(owner, ''): no owner leaves a trailing space.
  Result<JobChange> unowned = ParseJobChange("jobs/j QUEUED ");
  ASSERT_TRUE(unowned.ok());
  EXPECT_EQ(unowned->state, "QUEUED");
  EXPECT_EQ(unowned->owner, "");

  EXPECT_EQ(ParseJobChange("jobs/j").status().code(), StatusCode::kInvalidArgument);
}

TEST(ChangePayloadsTest, ANodeCarriesTheKeyPartsOfItsName) {
  Result<NodeChange> n = ParseNodeChange("projects/p/locations/us-central2-b/nodes/n1 READY r1");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->name, "projects/p/locations/us-central2-b/nodes/n1");
  EXPECT_EQ(n->state, "READY");
  EXPECT_EQ(n->owner, "r1");
  EXPECT_TRUE(n->has_key());
  EXPECT_EQ(n->project, "p");
  EXPECT_EQ(n->zone, "us-central2-b");
  EXPECT_EQ(n->node_id, "n1");
  EXPECT_FALSE(n->deleted());
}

TEST(ChangePayloadsTest, ADeletedNodeSaysSo) {
  Result<NodeChange> n = ParseNodeChange("projects/p/locations/z/nodes/n DELETED ");
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(n->deleted());
  EXPECT_EQ(n->owner, "");
}

TEST(ChangePayloadsTest, ANodeNameOfAnotherFormHasNoKey) {
  for (const char* name : {"n1", "projects/p/locations/z/nodes", "projects/p/zones/z/nodes/n",
                           "projects/p/locations/z/nodes/n/extra"}) {
    Result<NodeChange> n = ParseNodeChange(std::string(name) + " READY r");
    ASSERT_TRUE(n.ok()) << name;
    EXPECT_EQ(n->name, name);
    EXPECT_FALSE(n->has_key()) << name;
  }
  EXPECT_EQ(ParseNodeChange("").status().code(), StatusCode::kInvalidArgument);
}

TEST(ChangePayloadsTest, SettingsAreATableChangeOrAReset) {
  Result<SettingsChange> s = ParseSettingsChange("zone_capacity r2");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->reset);
  EXPECT_EQ(s->table, "zone_capacity");
  EXPECT_EQ(s->replica, "r2");

  Result<SettingsChange> nobody = ParseSettingsChange("chaos_rules ");
  ASSERT_TRUE(nobody.ok());
  EXPECT_EQ(nobody->table, "chaos_rules");
  EXPECT_EQ(nobody->replica, "");

  Result<SettingsChange> reset = ParseSettingsChange(SettingsResetPayload("r3"));
  ASSERT_TRUE(reset.ok());
  EXPECT_TRUE(reset->reset);
  EXPECT_EQ(reset->table, "");
  EXPECT_EQ(reset->replica, "r3");

  EXPECT_EQ(ParseSettingsChange("chaos_rules").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpuemu::db
