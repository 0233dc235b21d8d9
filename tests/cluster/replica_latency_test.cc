#include "cluster/replica_latency.h"

#include <gtest/gtest.h>

namespace tessera::cluster {
namespace {

TEST(ReplicaLatencyTest, OrdersPeersByAverageTimesRequestsInFlight) {
  ReplicaLatency l;
  const int64_t now = 1'000'000'000;
  for (int i = 0; i < 20; ++i) {
    l.Sent("a");
    l.Answered("a", 2'000, true, now);
    l.Sent("b");
    l.Answered("b", 500, true, now);
  }
  EXPECT_EQ(l.Order({"a", "b", "c"}, now), (std::vector<std::string>{"b", "c", "a"}));  // c: the mean
  // Requests in flight count against a peer: b with 5 outstanding scores 500 x 6 > 2,000.
  for (int i = 0; i < 5; ++i) l.Sent("b");
  EXPECT_EQ(l.Order({"a", "b"}, now), (std::vector<std::string>{"a", "b"}));
}

TEST(ReplicaLatencyTest, AMissedAnswerSendsAPeerLastForTwoSeconds) {
  ReplicaLatency l;
  const int64_t now = 1'000'000'000;
  for (const char* host : {"a", "b"}) {
    l.Sent(host);
    l.Answered(host, 300, true, now);
  }
  EXPECT_EQ(l.Order({"a", "b"}, now), (std::vector<std::string>{"a", "b"}));
  l.Sent("a");
  l.Missed("a", now);  // still in flight past the speculative threshold
  EXPECT_EQ(l.Order({"a", "b"}, now + 1), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(l.Order({"a", "b"}, now + ReplicaLatency::kSlowMicros + 1)[1], "a");  // in flight still counts
  l.Answered("a", 3'000'000, false, now + 3'000'000);  // then the time-out
  EXPECT_EQ(l.Order({"a", "b"}, now + 3'000'001), (std::vector<std::string>{"b", "a"}));
  // Slow no longer, and answering: it comes back.
  l.Sent("a");
  l.Answered("a", 200, true, now + 6'000'000);
  // A failed answer does not enter the average: 300 then 200 averages 287, below b's 300.
  EXPECT_EQ(l.AverageMicros("a"), 287);
  EXPECT_EQ(l.Order({"a", "b"}, now + 6'000'001), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace tessera::cluster
