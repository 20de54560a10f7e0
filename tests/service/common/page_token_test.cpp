#include "service/common/page_token.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tpuemu::service {
namespace {

TEST(PageTokenTest, EncodesTheLetterThenTheDecimalNumber) {
  EXPECT_EQ(EncodePageToken(kSeqPageToken, 42), "s42");
  EXPECT_EQ(EncodePageToken(kOffsetPageToken, 0), "o0");
  EXPECT_EQ(EncodePageToken(kSeqPageToken, std::numeric_limits<int64_t>::max()),
            "s9223372036854775807");
}

TEST(PageTokenTest, DecodesWhatItEncoded) {
  for (int64_t position : {int64_t{0}, int64_t{1}, int64_t{100}, int64_t{1} << 40,
                           std::numeric_limits<int64_t>::max()}) {
    Result<int64_t> back = DecodePageToken(kSeqPageToken, EncodePageToken(kSeqPageToken, position));
    ASSERT_TRUE(back.ok()) << position;
    EXPECT_EQ(*back, position);
  }
}

TEST(PageTokenTest, EmptyTokenIsTheFirstPage) {
  Result<int64_t> first = DecodePageToken(kSeqPageToken, "");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 0);
}

TEST(PageTokenTest, RefusesTokensItCannotHaveMadeNamingTheField) {
  for (const std::string token : {"garbage", "s", "o5", "5", "s-1", "s+1", "s 1", "s1x", "s0x10",
                                  "S1", "s99999999999999999999"}) {
    Result<int64_t> decoded = DecodePageToken(kSeqPageToken, token);
    ASSERT_FALSE(decoded.ok()) << token;
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument) << token;
    EXPECT_EQ(decoded.status().message(), "Invalid value for field 'pageToken': '" + token + "'");
  }
  // Each list reads only its own letter.
  EXPECT_FALSE(DecodePageToken(kOffsetPageToken, "s3").ok());
  EXPECT_EQ(*DecodePageToken(kOffsetPageToken, "o3"), 3);
  EXPECT_EQ(InvalidPageToken("o9").message(), "Invalid value for field 'pageToken': 'o9'");
}

TEST(PageTokenTest, PageSizeDefaultsAndIsCoercedToTheMaximum) {
  EXPECT_EQ(PageSize({}, 100), 100);
  EXPECT_EQ(PageSize({.page_size = 0}, 500), 500);
  EXPECT_EQ(PageSize({.page_size = -3}, 100), 100);
  EXPECT_EQ(PageSize({.page_size = 1}, 100), 1);
  EXPECT_EQ(PageSize({.page_size = 1000}, 100), 1000);
  EXPECT_EQ(PageSize({.page_size = 1001}, 100), kMaxPageSize);
}

}  // namespace
}  // namespace tpuemu::service
