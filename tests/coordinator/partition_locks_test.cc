// PartitionLocks (coordinator/partition_locks.h): exact keys, first-in
// first-out, all keys of a request at once, continuations run without
// nesting, and the blocking form.
#include "coordinator/partition_locks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

namespace tessera {
namespace {

std::string Key(const std::string& pk, uint32_t table = 7) { return PartitionLocks::KeyOf(table, {pk}); }

TEST(PartitionLocksTest, KeysNameOnePartitionOfOneTableExactly) {
  EXPECT_EQ(PartitionLocks::KeyOf(1, {"ab", "c"}), PartitionLocks::KeyOf(1, {"ab", "c"}));
  EXPECT_NE(PartitionLocks::KeyOf(1, {"ab", "c"}), PartitionLocks::KeyOf(1, {"a", "bc"}));
  EXPECT_NE(PartitionLocks::KeyOf(1, {"ab"}), PartitionLocks::KeyOf(2, {"ab"}));
}

TEST(PartitionLocksTest, AFreeKeyIsGrantedAtOnceOnTheCallingThreadAndOthersNeverWaitForIt) {
  PartitionLocks locks;
  std::vector<PartitionLocks::Held> held;
  // 1,000 partitions held: no other partition waits for any of them.
  for (int i = 0; i < 1000; ++i) {
    bool granted = false;
    locks.Acquire({Key("held" + std::to_string(i))}, [&](PartitionLocks::Held h) {
      granted = true;
      held.push_back(std::move(h));
    });
    ASSERT_TRUE(granted) << i;
  }
  const auto caller = std::this_thread::get_id();
  std::optional<std::thread::id> ran_on;
  locks.Acquire({Key("other")}, [&](PartitionLocks::Held) { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, caller);
  EXPECT_EQ(locks.keys_in_use(), 1000u);
  held.clear();
  EXPECT_EQ(locks.keys_in_use(), 0u);
}

TEST(PartitionLocksTest, WritersOfOnePartitionTakeTurnsInTheOrderTheyCame) {
  PartitionLocks locks;
  std::vector<int> order;
  std::vector<PartitionLocks::Held> held(4);
  for (int i = 0; i < 4; ++i) {
    locks.Acquire({Key("p")}, [&, i](PartitionLocks::Held h) {
      order.push_back(i);
      held[static_cast<size_t>(i)] = std::move(h);
    });
  }
  EXPECT_EQ(order, std::vector<int>({0}));
  held[0].Release();
  EXPECT_EQ(order, std::vector<int>({0, 1}));
  held[2].Release();  // holds nothing yet: a no-op
  held[1].Release();
  EXPECT_EQ(order, std::vector<int>({0, 1, 2}));
  held[2].Release();
  held[3].Release();
  EXPECT_EQ(order, std::vector<int>({0, 1, 2, 3}));
  EXPECT_EQ(locks.keys_in_use(), 0u);
}

TEST(PartitionLocksTest, ARequestOfSeveralKeysTakesThemTogetherAndIsNotPassed) {
  PartitionLocks locks;
  PartitionLocks::Held a, b, c;
  locks.Acquire({Key("x")}, [&](PartitionLocks::Held h) { a = std::move(h); });
  // B wants x and y: y is free but B waits for x and takes neither alone.
  locks.Acquire({Key("y"), Key("x"), Key("y")}, [&](PartitionLocks::Held h) { b = std::move(h); });
  EXPECT_FALSE(b.holds());
  EXPECT_EQ(locks.waiting(), 1u);
  // C wants only y, which no one holds: it came after B, so it waits for B.
  locks.Acquire({Key("y")}, [&](PartitionLocks::Held h) { c = std::move(h); });
  EXPECT_FALSE(c.holds());
  a.Release();
  EXPECT_TRUE(b.holds());
  EXPECT_FALSE(c.holds());
  b.Release();
  EXPECT_TRUE(c.holds());
  c.Release();
  EXPECT_EQ(locks.keys_in_use(), 0u);
}

TEST(PartitionLocksTest, ContinuationsThatReleaseAtOnceRunInALoopNotNested) {
  // 200,000 requests queued on one key, each releasing as soon as it is
  // granted: nested calls would overflow the stack long before the end.
  PartitionLocks locks;
  PartitionLocks::Held first;
  locks.Acquire({Key("hot")}, [&](PartitionLocks::Held h) { first = std::move(h); });
  constexpr int kWaiters = 200'000;
  int granted = 0;
  bool in_order = true;
  for (int i = 0; i < kWaiters; ++i) {
    locks.Acquire({Key("hot")}, [&, i](PartitionLocks::Held) {
      in_order = in_order && granted == i;
      ++granted;
    });  // the Held goes out of scope here: released at once
  }
  EXPECT_EQ(granted, 0);
  EXPECT_EQ(locks.waiting(), static_cast<size_t>(kWaiters));
  first.Release();
  EXPECT_EQ(granted, kWaiters);
  EXPECT_TRUE(in_order);
  EXPECT_EQ(locks.waiting(), 0u);
  EXPECT_EQ(locks.keys_in_use(), 0u);
}

TEST(PartitionLocksTest, LockBlocksOnlyUntilTheHolderReleases) {
  PartitionLocks locks;
  PartitionLocks::Held held;
  locks.Acquire({Key("p")}, [&](PartitionLocks::Held h) { held = std::move(h); });
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    PartitionLocks::Held mine = locks.Lock({Key("p")});
    got = mine.holds();
  });
  // It queues behind the holder and is not granted meanwhile.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (locks.waiting() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(locks.waiting(), 1u);
  EXPECT_FALSE(got);
  held.Release();
  waiter.join();
  EXPECT_TRUE(got);
  EXPECT_EQ(locks.keys_in_use(), 0u);
}

TEST(PartitionLocksTest, ConcurrentRequestsOfOverlappingKeysNeverHoldAKeyTogether) {
  PartitionLocks locks;
  constexpr int kKeys = 6;
  std::array<std::atomic<int>, kKeys> holders{};
  std::atomic<bool> overlap{false};
  std::atomic<int> done{0};
  // A key counted held from its grant until just before its release.
  struct Holding {
    std::array<std::atomic<int>, kKeys>* holders;
    std::vector<int> keys;
    PartitionLocks::Held held;
    ~Holding() {
      for (int k : keys) (*holders)[static_cast<size_t>(k)].fetch_sub(1);
      held.Release();
    }
  };
  // Some holders are released later, from another thread, as a replica answer would.
  std::mutex parked_mu;
  std::vector<std::unique_ptr<Holding>> parked;
  std::atomic<bool> stop{false};
  std::thread releaser([&] {
    while (!stop) {
      std::vector<std::unique_ptr<Holding>> batch;
      {
        std::lock_guard<std::mutex> lock(parked_mu);
        batch.swap(parked);
      }
      batch.clear();  // releases, running the continuations granted
      std::this_thread::yield();
    }
  });
  constexpr int kThreads = 4, kRequests = 3000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      for (int r = 0; r < kRequests; ++r) {
        std::vector<int> mine{static_cast<int>(rng() % kKeys), static_cast<int>(rng() % kKeys)};
        std::sort(mine.begin(), mine.end());
        mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
        std::vector<std::string> keys;
        for (int k : mine) keys.push_back(Key(std::to_string(k)));
        const bool blocking = rng() % 4 == 0, park = rng() % 2 == 0;
        auto enter = [&holders, &overlap, &done, &parked_mu, &parked, mine, park](PartitionLocks::Held h) {
          for (int k : mine) {
            if (holders[static_cast<size_t>(k)].fetch_add(1) != 0) overlap = true;
          }
          std::unique_ptr<Holding> holding(new Holding{&holders, mine, std::move(h)});
          ++done;
          if (!park) return;  // released here
          std::lock_guard<std::mutex> lock(parked_mu);
          parked.push_back(std::move(holding));
        };
        if (blocking) {
          enter(locks.Lock(keys));
        } else {
          locks.Acquire(keys, enter);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 100000 && done < kThreads * kRequests; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  stop = true;
  releaser.join();
  parked.clear();
  EXPECT_EQ(done, kThreads * kRequests);
  EXPECT_FALSE(overlap);
  EXPECT_EQ(locks.keys_in_use(), 0u);
}

}  // namespace
}  // namespace tessera
