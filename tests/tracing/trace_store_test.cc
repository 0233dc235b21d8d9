// TraceStore and TraceSession (tracing/trace_store.h): which requests are
// traced, what a session records, and the store's bounds.
#include "tracing/trace_store.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tessera::tracing {
namespace {

TEST(TraceStoreTest, TracesRequestedRequestsAndDrawsOthersByProbability) {
  TraceStore store("127.0.0.5");
  EXPECT_FALSE(store.ShouldTrace(false));  // probability 0
  EXPECT_TRUE(store.ShouldTrace(true));    // the tracing flag
  auto s = store.Begin("127.0.0.9", "Execute CQL3 query", {{"query", "SELECT 1"}});
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->session_id().size(), 16u);
  EXPECT_EQ(static_cast<uint8_t>(s->session_id()[6]) >> 4, 1);  // version 1: a timeuuid

  ASSERT_TRUE(store.set_probability(1).ok());
  EXPECT_TRUE(store.ShouldTrace(false));
  EXPECT_TRUE(store.set_probability(-0.1).IsInvalidArgument());
  EXPECT_TRUE(store.set_probability(1.5).IsInvalidArgument());
  EXPECT_EQ(store.probability(), 1.0);  // a refused value changes nothing
  ASSERT_TRUE(store.set_probability(0.5).ok());
  int drawn = 0;
  for (int i = 0; i < 2000; ++i) drawn += store.ShouldTrace(false);
  EXPECT_GT(drawn, 800);  // about half: 1000 +- 5 sigma is [888, 1112]
  EXPECT_LT(drawn, 1200);
}

TEST(TraceStoreTest, ASessionRecordsItsStepsAndItsDuration) {
  TraceStore store("127.0.0.5");
  auto s = store.Begin("127.0.0.9", "Execute CQL3 query", {{"consistency_level", "ONE"}});
  ASSERT_NE(s, nullptr);
  auto running = store.Find(s->session_id());
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->duration_micros, -1);  // null in system_traces.sessions until answered
  s->Event("Parsing SELECT 1");
  std::thread other([&] { s->Event("from another thread"); });
  other.join();
  s->Finish();
  s->Event("a late replica answer");
  auto done = store.Find(s->session_id());
  ASSERT_TRUE(done.has_value());
  EXPECT_GE(done->duration_micros, 0);
  EXPECT_EQ(done->coordinator, "127.0.0.5");
  EXPECT_EQ(done->client, "127.0.0.9");
  EXPECT_EQ(done->command, "QUERY");
  EXPECT_EQ(done->parameters.at("consistency_level"), "ONE");
  ASSERT_EQ(done->events.size(), 3u);
  EXPECT_EQ(done->events[0].activity, "Parsing SELECT 1");
  EXPECT_EQ(done->events[0].source, "127.0.0.5");
  EXPECT_LE(done->events[0].source_elapsed_micros, done->events[1].source_elapsed_micros);
  EXPECT_NE(done->events[0].event_id, done->events[1].event_id);
  s->Finish();  // once only
  EXPECT_EQ(store.Find(s->session_id())->duration_micros, done->duration_micros);
}

TEST(TraceStoreTest, FinishedSessionsGoToTheHookAndOtherNodesSessionsAreHeld) {
  TraceStore coordinator("127.0.0.1"), other("127.0.0.2");
  std::vector<TraceSessionRecord> sent;
  coordinator.set_on_finish([&](const TraceSessionRecord& r) { sent.push_back(r); });
  auto s = coordinator.Begin("127.0.0.9", "Execute CQL3 query", {{"query", "SELECT 1"}});
  s->Event("Parsing SELECT 1");
  coordinator.Finish(s);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_GE(sent[0].duration_micros, 0);
  ASSERT_EQ(sent[0].events.size(), 1u);
  other.Add(sent[0]);
  other.Add(sent[0]);  // sent twice: held once
  auto held = other.Find(s->session_id());
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(other.Sessions().size(), 1u);
  EXPECT_EQ(held->coordinator, "127.0.0.1");  // the coordinator's, not this node's
  EXPECT_EQ(held->events[0].source, "127.0.0.1");
  EXPECT_EQ(held->duration_micros, sent[0].duration_micros);
  coordinator.set_on_finish({});
  coordinator.Finish(coordinator.Begin("c", "r", {}));
  EXPECT_EQ(sent.size(), 1u);  // no hook: nothing sent
}

TEST(TraceStoreTest, HoldsTheNewestSessionsAndBoundsEvents) {
  TraceStore store("127.0.0.5");
  auto first = store.Begin("c", "r", {});
  for (size_t i = 0; i < TraceStore::kMaxSessions; ++i) ASSERT_NE(store.Begin("c", "r", {}), nullptr);
  EXPECT_EQ(store.Sessions().size(), TraceStore::kMaxSessions);
  EXPECT_FALSE(store.Find(first->session_id()).has_value());  // the oldest went
  for (size_t i = 0; i < TraceSession::kMaxEvents + 10; ++i) first->Event("step");
  EXPECT_EQ(first->Snapshot().events.size(), TraceSession::kMaxEvents);
}

}  // namespace
}  // namespace tessera::tracing
