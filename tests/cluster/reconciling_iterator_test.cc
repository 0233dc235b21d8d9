// ReconcilingIterator (cluster/reconciling_iterator.h) over a fake fetch:
// the windows it asks for, and a forward Seek answered from the window it
// holds when that window covers the target.
#include "cluster/reconciling_iterator.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace tessera::cluster {
namespace {

std::string Key(int i) {
  char key[8];
  std::snprintf(key, sizeof key, "k%03d", i);
  return key;
}

// Keys "k000".."k099" in windows of `limit` keys, each fetch recorded.
class FakeReplicas {
 public:
  explicit FakeReplicas(size_t limit) : limit_(limit) {
    for (int i = 0; i < 100; ++i) data_[Key(i)] = "v" + std::to_string(i);
  }
  Result<KeyWindow> Fetch(const WindowRequest& w) {
    fetches.push_back(w.from);
    KeyWindow window;
    if (w.reverse) {
      auto it = w.from_end ? data_.end() : (w.inclusive ? data_.upper_bound(w.from) : data_.lower_bound(w.from));
      while (it != data_.begin() && window.entries.size() < limit_) {
        --it;
        window.entries.emplace_back(it->first, it->second);
      }
      window.more = it != data_.begin();
      return window;
    }
    auto it = w.inclusive ? data_.lower_bound(w.from) : data_.upper_bound(w.from);
    for (; it != data_.end() && window.entries.size() < limit_; ++it) window.entries.emplace_back(it->first, it->second);
    window.more = it != data_.end();
    return window;
  }
  ReconcilingIterator Iterator() {
    return ReconcilingIterator("", "", [this](const WindowRequest& w) { return Fetch(w); });
  }
  std::vector<std::string> fetches;

 private:
  size_t limit_;
  std::map<std::string, std::string> data_;
};

TEST(ReconcilingIteratorTest, ASeekWithinTheHeldWindowFetchesNothing) {
  FakeReplicas replicas(40);
  auto it = replicas.Iterator();
  it.Seek("k010");
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), "k010");
  ASSERT_EQ(replicas.fetches.size(), 1u);
  // Jumping forward inside [k010, k049]: the same window.
  for (const char* target : {"k011", "k020", "k0205", "k049"}) {
    it.Seek(target);
    ASSERT_TRUE(it.Valid()) << target;
    EXPECT_GE(std::string(it.key()), std::string(target));
  }
  it.Seek("k0205");
  EXPECT_EQ(it.key(), "k021");  // the next key after an absent one
  EXPECT_EQ(replicas.fetches.size(), 1u);
  // Before the window's start and past its last entry (more follow): fetched.
  it.Seek("k005");
  EXPECT_EQ(it.key(), "k005");
  it.Seek("k090");
  EXPECT_EQ(it.key(), "k090");
  EXPECT_EQ(replicas.fetches, (std::vector<std::string>{"k010", "k005", "k090"}));
  // The last window reaches the range's end: a seek past its last key ends
  // the iterator without a fetch; one inside it finds the key.
  it.Seek("k0995");
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().ok());
  it.Seek("k095");
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), "k095");
  EXPECT_EQ(replicas.fetches.size(), 3u);
}

TEST(ReconcilingIteratorTest, JumpingForwardFetchesAWindowPerWindowNotPerSeek) {
  // Every third key, as a median search jumps from partition to partition:
  // 34 seeks in 100 keys over windows of 16.
  FakeReplicas replicas(16);
  auto it = replicas.Iterator();
  int seeks = 0;
  for (int i = 0; i < 100; i += 3, ++seeks) {
    it.Seek(Key(i));
    ASSERT_TRUE(it.Valid()) << Key(i);
    EXPECT_EQ(it.key(), Key(i));
  }
  EXPECT_EQ(seeks, 34);
  EXPECT_LE(replicas.fetches.size(), 8u) << "about a fetch per seek";
}

TEST(ReconcilingIteratorTest, AChangeOfDirectionAndAReverseWindowAlwaysFetch) {
  FakeReplicas replicas(40);
  auto it = replicas.Iterator();
  it.SeekForPrev("k050");
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), "k050");
  it.Seek("k045");  // inside the reverse window's keys, but forward: fetched
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), "k045");
  it.Next();
  EXPECT_EQ(it.key(), "k046");
  EXPECT_EQ(replicas.fetches.size(), 2u);
}

}  // namespace
}  // namespace tessera::cluster
