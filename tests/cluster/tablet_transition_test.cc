// The migration stage machine as plain values (cluster/tablet_transition.h),
// its frozen form in a placement (cluster/tablet_placement.h), and the write
// fence a stage's barrier drains (cluster/placement_fence.h).
#include "cluster/tablet_transition.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "cluster/placement_fence.h"
#include "cluster/tablet_placement.h"
#include "common/uuid.h"

namespace tessera::cluster {
namespace {

using Hosts = std::vector<std::string>;

TEST(TabletTransitionTest, StagesInOrderWithFrozenNames) {
  std::vector<std::string> names;
  for (std::optional<MigrationStage> s = MigrationStage::kAllowWriteBothReadOld; s; s = NextMigrationStage(*s)) {
    names.push_back(MigrationStageName(*s));
    auto back = MigrationStageFromName(names.back());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, *s);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"allow_write_both_read_old", "write_both_read_old", "streaming",
                                             "write_both_read_new", "use_new", "cleanup"}));
  EXPECT_TRUE(MigrationStageFromName("finished").status().IsInvalidArgument());
}

TEST(TabletTransitionTest, WritesAndReadsFollowTheStage) {
  const Hosts old = {"a", "b", "c"};
  TabletTransition t{MigrationStage::kAllowWriteBothReadOld, "b", "d"};
  EXPECT_EQ(NewReplicas(old, t), (Hosts{"a", "d", "c"}));
  struct Want {
    MigrationStage stage;
    Hosts natural, pending, reads;
  };
  const Want wants[] = {
      {MigrationStage::kAllowWriteBothReadOld, old, {}, old},
      {MigrationStage::kWriteBothReadOld, old, {"d"}, old},
      {MigrationStage::kStreaming, old, {"d"}, old},
      {MigrationStage::kWriteBothReadNew, old, {"d"}, {"a", "d", "c"}},
      {MigrationStage::kUseNew, {"a", "d", "c"}, {}, {"a", "d", "c"}},
      {MigrationStage::kCleanup, {"a", "d", "c"}, {}, {"a", "d", "c"}},
  };
  for (const Want& w : wants) {
    t.stage = w.stage;
    const WriteReplicaSet writes = WriteReplicas(old, t);
    EXPECT_EQ(writes.natural, w.natural) << MigrationStageName(w.stage);
    EXPECT_EQ(writes.pending, w.pending) << MigrationStageName(w.stage);
    EXPECT_EQ(ReadReplicas(old, t), w.reads) << MigrationStageName(w.stage);
  }
  EXPECT_EQ(WriteReplicas(old, std::nullopt).natural, old);
  EXPECT_EQ(ReadReplicas(old, std::nullopt), old);
}

// A replication factor change: no leaving replica adds one, no pending one
// drops one; the stages route as a move's do.
TEST(TabletTransitionTest, AddingAndDroppingAReplicaFollowTheStages) {
  const Hosts old = {"a", "b"};
  TabletTransition add{MigrationStage::kWriteBothReadOld, "", "c"};
  EXPECT_EQ(NewReplicas(old, add), (Hosts{"a", "b", "c"}));
  EXPECT_EQ(WriteReplicas(old, add).natural, old);
  EXPECT_EQ(WriteReplicas(old, add).pending, Hosts{"c"});
  EXPECT_EQ(ReadReplicas(old, add), old);
  add.stage = MigrationStage::kWriteBothReadNew;
  EXPECT_EQ(ReadReplicas(old, add), (Hosts{"a", "b", "c"}));
  add.stage = MigrationStage::kUseNew;
  EXPECT_EQ(WriteReplicas(old, add).natural, (Hosts{"a", "b", "c"}));
  EXPECT_TRUE(WriteReplicas(old, add).pending.empty());

  TabletTransition drop{MigrationStage::kStreaming, "a", ""};
  EXPECT_EQ(NewReplicas(old, drop), Hosts{"b"});
  EXPECT_EQ(WriteReplicas(old, drop).natural, old);  // the dropped replica still gets writes
  EXPECT_TRUE(WriteReplicas(old, drop).pending.empty());
  EXPECT_EQ(ReadReplicas(old, drop), old);
  drop.stage = MigrationStage::kWriteBothReadNew;
  EXPECT_EQ(ReadReplicas(old, drop), Hosts{"b"});
  drop.stage = MigrationStage::kCleanup;
  EXPECT_EQ(WriteReplicas(old, drop).natural, Hosts{"b"});
}

TEST(TabletTransitionTest, PlacementCarriesTheTransitionInItsFrozenForm) {
  const std::string a = "00000000-0000-0000-0000-00000000000a", b = "00000000-0000-0000-0000-00000000000b",
                    c = "00000000-0000-0000-0000-00000000000c";
  const std::string text = R"({"version": 1, "tablets": [
      {"start": "", "end": "40", "replicas": [")" + a + R"(", ")" + b + R"("],
       "transition": {"stage": "streaming", "leaving": ")" + a + R"(", "pending": ")" + c + R"("}},
      {"start": "40", "end": "", "replicas": [")" + b + R"(", ")" + c + R"("]}]})";
  auto placement = DecodePlacement(text);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  ASSERT_EQ(placement->size(), 2u);
  const auto& moving = (*placement)[0];
  ASSERT_TRUE(moving.transition.has_value());
  EXPECT_EQ(moving.transition->stage, MigrationStage::kStreaming);
  EXPECT_EQ(UuidText(moving.transition->leaving), a);
  EXPECT_EQ(UuidText(moving.transition->pending), c);
  EXPECT_TRUE(moving.transition->driver.empty());  // written before drivers were recorded
  EXPECT_FALSE((*placement)[1].transition.has_value());
  // The driver, when there is one, is kept.
  std::string driven = text;
  driven.replace(driven.find(R"("pending")"), 0, R"("driver": ")" + b + R"(", )");
  auto with_driver = DecodePlacement(driven);
  ASSERT_TRUE(with_driver.ok()) << with_driver.status().ToString();
  EXPECT_EQ(UuidText((*with_driver)[0].transition->driver), b);
  std::string bad = text;
  bad.replace(bad.find("streaming"), 9, "streamed!");
  EXPECT_FALSE(DecodePlacement(bad).ok());
  // A replication factor change leaves one side out; leaving both out is corrupt.
  std::string added = text;
  added.erase(added.find(R"("leaving")"), std::string(R"("leaving": ")" + a + R"(", )").size());
  auto with_added = DecodePlacement(added);
  ASSERT_TRUE(with_added.ok()) << with_added.status().ToString();
  EXPECT_TRUE((*with_added)[0].transition->leaving.empty());
  EXPECT_EQ(UuidText((*with_added)[0].transition->pending), c);
  std::string neither = added;
  neither.erase(neither.find(R"(, "pending")"), std::string(R"(, "pending": ")" + c + R"(")").size());
  EXPECT_EQ(DecodePlacement(neither).status().code(), Status::Code::kCorruption);
}

TEST(PlacementFenceTest, DrainWaitsForOlderWritesOnly) {
  PlacementFence fence;
  std::atomic<bool> drained{false};
  auto old_write = std::make_unique<PlacementFence::RequestGuard>(&fence);
  std::thread drain([&] {
    EXPECT_TRUE(fence.Drain(std::chrono::seconds(10)));
    drained = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // A write that starts after the drain began does not hold it.
  PlacementFence::RequestGuard new_write(&fence);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(drained);
  old_write.reset();
  drain.join();
  EXPECT_TRUE(drained);
  // With a write older than it still running, a drain gives up at its limit.
  PlacementFence::RequestGuard stuck(&fence);
  EXPECT_FALSE(fence.Drain(std::chrono::milliseconds(50)));
}

}  // namespace
}  // namespace tessera::cluster
