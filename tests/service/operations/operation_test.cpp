#include "service/operations/operation.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tpuemu::service {
namespace {

// Node.id is an int64 in the API's proto: a uid of 2^63 or more reads as negative in clients that
// parse it as one (the Google Node.js client did, in about 8% of runs).
TEST(NodeUidTest, HasNineteenDigitsAndFitsInAnInt64) {
  for (int i = 0; i < 100000; ++i) {
    const std::string uid = NewNodeUid();
    ASSERT_EQ(uid.size(), 19u) << uid;
    ASSERT_NE(uid[0], '0') << uid;
    ASSERT_LE(std::stoull(uid), static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) << uid;
  }
}

}  // namespace
}  // namespace tpuemu::service
