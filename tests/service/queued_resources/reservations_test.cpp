#include "service/queued_resources/reservations.h"

#include <gtest/gtest.h>

#include <memory>

#include "service/common/scheduler.h"
#include "service/nodes/node_manager.h"

namespace tpuemu::service {
namespace {

constexpr char kZone[] = "us-central2-b";
const std::string kParent = std::string("projects/proj/locations/") + kZone;

class ReservationsTest : public ::testing::Test {
 protected:
  ~ReservationsTest() override { scheduler_.Stop(); }

  Result<std::string> Resolve(const std::string& requested, const char* type = "v4-8",
                              const std::string& project = "proj") {
    Result<std::string> out = Status::Internal("not run");
    Status s = writes_.batcher().Run([&](db::Txn& txn) {
      out =
          book_.Resolve(txn, project, kZone, requested, engine::FindAcceleratorType(type).value());
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
  }
  Result<bool> HasRoom(const std::string& reservation, int64_t tensorcores, int64_t chips) {
    Result<bool> out = Status::Internal("not run");
    Status s = writes_.batcher().Run([&](db::Txn& txn) {
      out = book_.HasRoom(txn, reservation, tensorcores, chips);
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
  }
  static void ExpectInvalid(const Status& s, const std::string& field) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
    EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
  }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  Scheduler scheduler_;
  WritePath writes_{*store_, Catalog::Default(), {}};
  NodeManager nodes_{*store_, writes_, scheduler_, Catalog::Default(), {}};
  ReservationBook book_{*store_, writes_.batcher(), Catalog::Default()};
};

TEST_F(ReservationsTest, CreateListAndDeleteInCreationOrder) {
  Result<Reservation> cores = book_.Create("proj", kZone, "cores", 16, "CORES", "v4");
  ASSERT_TRUE(cores.ok()) << cores.status().message();
  EXPECT_EQ(cores->name, kParent + "/reservations/cores");
  ASSERT_TRUE(book_.Create("proj", kZone, "chips", 4, "CHIPS", "").ok());
  ASSERT_TRUE(book_.Create("other", kZone, "theirs", 4, "CHIPS", "").ok());
  Result<std::vector<Reservation>> list = book_.List("proj", kZone);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, kParent + "/reservations/cores");
  EXPECT_EQ((*list)[1].capacity_units, "CHIPS");
  EXPECT_EQ((*list)[0].used, 0);
  nlohmann::json rendered = RenderReservation((*list)[0]);
  EXPECT_EQ(rendered["standard"]["size"], 16);
  EXPECT_EQ(rendered["standard"]["resourceType"], "v4");
  EXPECT_EQ(rendered["standard"]["usage"]["total"], "0");
  EXPECT_EQ(rendered["state"], "ACTIVE");
  EXPECT_FALSE(RenderReservation((*list)[1])["standard"].contains("resourceType"));

  EXPECT_EQ(book_.Create("proj", kZone, "cores", 1, "CORES", "").status().code(),
            StatusCode::kAlreadyExists);
  ASSERT_TRUE(book_.Delete(kParent + "/reservations/cores").ok());
  EXPECT_EQ(book_.Delete(kParent + "/reservations/cores").code(), StatusCode::kNotFound);
  EXPECT_EQ(book_.List("proj", kZone)->size(), 1u);
}

TEST_F(ReservationsTest, CreateNamesTheBadField) {
  ExpectInvalid(book_.Create("proj", kZone, "Bad_Id", 1, "CORES", "").status(), "reservationId");
  ExpectInvalid(book_.Create("proj", kZone, "r", 0, "CORES", "").status(), "size");
  ExpectInvalid(book_.Create("proj", kZone, "r", 1, "GPUS", "").status(), "capacityUnits");
  EXPECT_EQ(book_.Create("proj", "mars-1", "r", 1, "CORES", "").status().code(),
            StatusCode::kNotFound);
}

TEST_F(ReservationsTest, ResolveFindsAFittingReservationOrNamesReservationName) {
  ASSERT_TRUE(book_.Create("proj", kZone, "v5e", 8, "CHIPS", "v5litepod").ok());
  ASSERT_TRUE(book_.Create("proj", kZone, "v4s", 32, "CORES", "V4").ok());
  // "-": the first of the project's reservations there that fits the type.
  EXPECT_EQ(*Resolve(kParent + "/reservations/-", "v4-8"), kParent + "/reservations/v4s");
  EXPECT_EQ(*Resolve(kParent + "/reservations/-", "v5litepod-8"), kParent + "/reservations/v5e");
  EXPECT_EQ(*Resolve(kParent + "/reservations/v4s", "v4-32"), kParent + "/reservations/v4s");
  Result<std::string> wrong_family = Resolve(kParent + "/reservations/v5e", "v4-8");
  ExpectInvalid(wrong_family.status(), "reservationName");
  EXPECT_NE(wrong_family.status().message().find("not v4-8"), std::string::npos);
  ExpectInvalid(Resolve(kParent + "/reservations/none").status(), "not found");
  ExpectInvalid(Resolve(kParent + "/reservations/-", "v5p-8").status(), "has no reservation");
  ExpectInvalid(Resolve("projects/other/locations/us-central2-b/reservations/-").status(),
                "that project's reservations");
}

TEST_F(ReservationsTest, HasRoomCountsInTheReservationsUnits) {
  ASSERT_TRUE(book_.Create("proj", kZone, "cores", 16, "CORES", "").ok());
  ASSERT_TRUE(book_.Create("proj", kZone, "chips", 4, "CHIPS", "").ok());
  EXPECT_TRUE(*HasRoom(kParent + "/reservations/cores", 16, 100));
  EXPECT_FALSE(*HasRoom(kParent + "/reservations/cores", 17, 1));
  EXPECT_TRUE(*HasRoom(kParent + "/reservations/chips", 100, 4));
  EXPECT_FALSE(*HasRoom(kParent + "/reservations/chips", 1, 5));
  // A deleted reservation has no room (its queued resources wait).
  EXPECT_FALSE(*HasRoom(kParent + "/reservations/gone", 1, 1));
}

TEST(AcceleratorFamilyTest, IsTheTypeWithoutItsSize) {
  EXPECT_EQ(AcceleratorFamily("v5litepod-8"), "v5litepod");
  EXPECT_EQ(AcceleratorFamily("v4-32"), "v4");
  EXPECT_EQ(AcceleratorFamily("V5P-8"), "v5p");
}

}  // namespace
}  // namespace tpuemu::service
