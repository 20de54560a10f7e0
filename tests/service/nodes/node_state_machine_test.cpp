#include "service/nodes/node_state_machine.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

TEST(NodeStateMachineTest, LegalTransitions) {
  EXPECT_TRUE(CheckTransition("n", NodeState::kReady, NodeVerb::kStop).ok());
  EXPECT_TRUE(CheckTransition("n", NodeState::kStopped, NodeVerb::kStart).ok());
  EXPECT_TRUE(CheckTransition("n", NodeState::kReady, NodeVerb::kDelete).ok());
  EXPECT_TRUE(CheckTransition("n", NodeState::kStopped, NodeVerb::kDelete).ok());
  EXPECT_TRUE(CheckTransition("n", NodeState::kReady, NodeVerb::kUpdate).ok());
}

TEST(NodeStateMachineTest, IllegalTransitionsAreFailedPrecondition) {
  Status s = CheckTransition("projects/p/locations/z/nodes/n", NodeState::kReady, NodeVerb::kStart);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("READY"), std::string::npos);
  EXPECT_NE(s.message().find("start"), std::string::npos);
  EXPECT_FALSE(CheckTransition("n", NodeState::kStopped, NodeVerb::kStop).ok());
  for (NodeVerb v : {NodeVerb::kStart, NodeVerb::kStop, NodeVerb::kDelete, NodeVerb::kUpdate}) {
    EXPECT_FALSE(CheckTransition("n", NodeState::kDeleting, v).ok());
    EXPECT_FALSE(CheckTransition("n", NodeState::kCreating, v).ok());
  }
}

TEST(NodeStateMachineTest, TransientAndFinalStates) {
  EXPECT_EQ(TransientState(NodeVerb::kCreate, NodeState::kUnspecified), NodeState::kCreating);
  EXPECT_EQ(TransientState(NodeVerb::kStop, NodeState::kReady), NodeState::kStopping);
  EXPECT_EQ(TransientState(NodeVerb::kStart, NodeState::kStopped), NodeState::kStarting);
  EXPECT_EQ(TransientState(NodeVerb::kDelete, NodeState::kReady), NodeState::kDeleting);
  EXPECT_EQ(TransientState(NodeVerb::kUpdate, NodeState::kStopped), NodeState::kStopped);
  EXPECT_EQ(FinalState(NodeVerb::kCreate, NodeState::kCreating), NodeState::kReady);
  EXPECT_EQ(FinalState(NodeVerb::kStop, NodeState::kStopping), NodeState::kStopped);
  EXPECT_EQ(FinalState(NodeVerb::kStart, NodeState::kStarting), NodeState::kReady);
  EXPECT_EQ(FinalState(NodeVerb::kDelete, NodeState::kDeleting), std::nullopt);
  EXPECT_EQ(FinalState(NodeVerb::kUpdate, NodeState::kReady), NodeState::kReady);
}

}  // namespace
}  // namespace tpuemu::service
