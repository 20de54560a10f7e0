#include "service/queued_resources/qr_state_machine.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

constexpr char kName[] = "projects/p/locations/z/queuedResources/q";

TEST(QrStateMachineTest, DeleteWithoutForceOnlyFromQueuedFailedSuspendedOrWithoutNodes) {
  for (QrState state :
       {QrState::kAccepted, QrState::kWaitingForResources, QrState::kFailed, QrState::kSuspended}) {
    EXPECT_TRUE(CheckDelete(kName, state, /*has_nodes=*/true, /*force=*/false).ok())
        << QrStateName(state);
  }
  for (QrState state : {QrState::kActive, QrState::kProvisioning, QrState::kSuspending}) {
    Status refused = CheckDelete(kName, state, /*has_nodes=*/true, /*force=*/false);
    EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << QrStateName(state);
    EXPECT_NE(refused.message().find(kName), std::string::npos) << refused.message();
    EXPECT_NE(refused.message().find(QrStateName(state)), std::string::npos) << refused.message();
    EXPECT_NE(refused.message().find("force=true"), std::string::npos) << refused.message();
    EXPECT_TRUE(CheckDelete(kName, state, /*has_nodes=*/false, /*force=*/false).ok());
    EXPECT_TRUE(CheckDelete(kName, state, /*has_nodes=*/true, /*force=*/true).ok());
  }
}

TEST(QrStateMachineTest, NeverDeletesWhileCreatingOrDeletingEvenWithForce) {
  for (QrState state : {QrState::kCreating, QrState::kDeleting}) {
    for (bool force : {false, true}) {
      Status refused = CheckDelete(kName, state, /*has_nodes=*/false, force);
      EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << QrStateName(state);
      EXPECT_NE(refused.message().find(QrStateName(state)), std::string::npos);
    }
  }
}

TEST(QrStateMachineTest, ResetOnlyFromSuspendedOrFailedOnceTheNodesAreGone) {
  EXPECT_TRUE(CheckReset(kName, QrState::kSuspended, /*has_nodes=*/false).ok());
  EXPECT_TRUE(CheckReset(kName, QrState::kFailed, /*has_nodes=*/false).ok());
  Status cleaning = CheckReset(kName, QrState::kFailed, /*has_nodes=*/true);
  EXPECT_EQ(cleaning.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(cleaning.message().find("still being deleted"), std::string::npos);
  for (QrState state :
       {QrState::kCreating, QrState::kAccepted, QrState::kWaitingForResources,
        QrState::kProvisioning, QrState::kActive, QrState::kSuspending, QrState::kDeleting}) {
    Status refused = CheckReset(kName, state, /*has_nodes=*/false);
    EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << QrStateName(state);
    EXPECT_NE(refused.message().find("SUSPENDED or FAILED"), std::string::npos);
  }
}

TEST(QrStateMachineTest, OnlyAcceptedAndWaitingAreQueued) {
  EXPECT_TRUE(IsQueued(QrState::kAccepted));
  EXPECT_TRUE(IsQueued(QrState::kWaitingForResources));
  for (QrState state :
       {QrState::kUnspecified, QrState::kCreating, QrState::kProvisioning, QrState::kFailed,
        QrState::kDeleting, QrState::kActive, QrState::kSuspending, QrState::kSuspended}) {
    EXPECT_FALSE(IsQueued(state)) << QrStateName(state);
  }
}

TEST(QrStateMachineTest, StateNamesRoundTripWithTheProtoNumbers) {
  EXPECT_EQ(static_cast<int>(QrState::kWaitingForResources), 9);
  EXPECT_EQ(static_cast<int>(QrState::kSuspended), 8);
  for (int n = 1; n <= 9; ++n) {
    const QrState state = static_cast<QrState>(n);
    Result<QrState> parsed = ParseQrState(QrStateName(state));
    ASSERT_TRUE(parsed.ok()) << QrStateName(state);
    EXPECT_EQ(*parsed, state);
  }
  EXPECT_FALSE(ParseQrState("RUNNING").ok());
}

}  // namespace
}  // namespace tpuemu::service
