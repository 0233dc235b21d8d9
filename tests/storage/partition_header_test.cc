#include "storage/partition_header.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(PartitionHeaderTest, RangeTombstoneBoundsFollowInclusiveness) {
  DeletionTime d{10, 1};
  // [b, d] over single-byte clustering prefixes
  RangeTombstone r = MakeRangeTombstone("b", true, "d", true, d);
  EXPECT_FALSE(r.Covers("a"));
  EXPECT_TRUE(r.Covers("b"));
  EXPECT_TRUE(r.Covers("bzz"));  // rows with prefix b
  EXPECT_TRUE(r.Covers("dzz"));  // rows with prefix d (inclusive end)
  EXPECT_FALSE(r.Covers("e"));
  RangeTombstone open = MakeRangeTombstone("b", false, "d", false, d);
  EXPECT_FALSE(open.Covers("b"));
  EXPECT_FALSE(open.Covers("bzz"));
  EXPECT_TRUE(open.Covers("c"));
  EXPECT_FALSE(open.Covers("d"));
  RangeTombstone all = MakeRangeTombstone("", true, "", true, d);
  EXPECT_TRUE(all.Covers(""));
  EXPECT_TRUE(all.Covers("\xff\xff"));
}

TEST(PartitionHeaderTest, ReconcileKeepsLatestDeletionAndDropsShadowedRanges) {
  PartitionHeader a, b;
  a.range_tombstones.push_back(MakeRangeTombstone("a", true, "c", true, {5, 1}));
  a.range_tombstones.push_back(MakeRangeTombstone("x", true, "z", true, {30, 1}));
  b.partition_deletion = {20, 2};
  PartitionHeader ab = a, ba = b;
  ReconcileHeader(&ab, b);
  ReconcileHeader(&ba, a);
  EXPECT_EQ(ab, ba);
  ASSERT_EQ(ab.range_tombstones.size(), 1u);  // [a, c]@5 is shadowed by the partition deletion @20
  EXPECT_EQ(ab.DeletionFor("y", false).timestamp, 30);
  EXPECT_EQ(ab.DeletionFor("b", false).timestamp, 20);
  EXPECT_EQ(ab.DeletionFor("y", true).timestamp, 20);  // static rows: partition deletion only
}

TEST(PartitionHeaderTest, EncodingRoundTripsAndPurges) {
  PartitionHeader h;
  h.partition_deletion = {7, 100};
  h.range_tombstones.push_back(MakeRangeTombstone("k", true, "", true, {9, 150}));
  std::string enc;
  EncodePartitionHeader(h, &enc);
  PartitionHeader back;
  ASSERT_TRUE(DecodePartitionHeader(enc, &back).ok());
  EXPECT_EQ(back, h);
  EXPECT_FALSE(DecodePartitionHeader(enc.substr(0, enc.size() - 1), &back).ok());
  EXPECT_TRUE(PurgeHeader(&h, 120, 10));  // partition deletion at 100 + 10 <= 120
  EXPECT_TRUE(h.partition_deletion.IsLive());
  EXPECT_EQ(h.range_tombstones.size(), 1u);
  EXPECT_TRUE(PurgeHeader(&h, 160, 10));
  EXPECT_TRUE(h.IsEmpty());
}

}  // namespace
}  // namespace tessera
