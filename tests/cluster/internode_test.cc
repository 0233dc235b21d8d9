// The internode client and server in one process, over loopback gRPC:
// requests to one node queued behind its calls in flight travel together in
// Batch messages, and each still gets its own answer.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/internode_client.h"
#include "cluster/internode_service.h"
#include "cluster/paxos_state.h"
#include "cluster/replica_service.h"
#include "tests/db/test_util.h"
#include "common/bytes.h"
#include "common/time_uuid.h"
#include "keys/storage_key.h"
#include "storage/partition_header.h"
#include "storage/row_fragment.h"

namespace tessera::cluster {
namespace {

constexpr int kRequests = 300;
constexpr int64_t kTimeoutMicros = 30'000'000;

// Table-relative keys of the test tables (an int partition key k, no
// clustering): where partition k's position and its row are. A replica
// refuses writes to keys that are not rows of the table (CheckWrites).
std::string RelativePosition(const TableSchema& table, int k) {
  const std::string pk = testing::Int(k);
  std::string position;
  Token token = 0;
  EXPECT_TRUE(EncodePartitionPosition(table, {std::string_view(pk)}, &position, &token).ok());
  return cluster::RelativeKey(table.id, position).value_or("");
}
std::string RelativeKey(const TableSchema& table, int k) {
  return RelativePosition(table, k) + static_cast<char>(KeyKind::kRow);
}

std::string Row(int i) {
  RowFragment row;
  Cell cell;
  cell.column_id = 1;
  cell.timestamp = 1000 + i;
  cell.value = "value-" + std::to_string(i);
  row.cells.push_back(cell);
  std::string out;
  EncodeRowFragment(row, &out);
  return out;
}

// Counts callbacks until `expected` have run (bounded wait).
class Countdown {
 public:
  explicit Countdown(int expected) : left_(expected) {}
  void Done() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--left_ == 0) cv_.notify_all();
  }
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return left_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int left_;
};

TEST(InternodeTest, RequestsQueuedBehindCallsInFlightShareMessagesAndEachGetsItsAnswer) {
  testing::TestDatabase db("internode_coalescing");
  auto table = testing::MakeTable(db.db(), "kv", Distribution::kHash, {"k:int:pk", "v:text:regular"});
  ReplicaService replica(&db.db());
  InternodeServer server(&replica);
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  InternodeClient client;
  const std::string target = "127.0.0.1:" + std::to_string(server.port());

  // All at once: at most 2 calls are in flight, the rest wait and go in batches.
  // Every tenth is traced: the replica's steps come back with its answer,
  // alone or batched (tracing/trace_session.h ReplicaSteps).
  auto traced = [](int i) {
    tracing::TraceSessionRecord r;
    r.session_id = std::string(15, '\x11') + static_cast<char>(i % 256);
    r.coordinator = "127.0.0.9";
    return std::make_shared<tracing::TraceSession>(r);
  };
  std::vector<std::shared_ptr<tracing::TraceSession>> traces(kRequests + 1);
  for (int i = 0; i <= kRequests; i += 10) traces[static_cast<size_t>(i)] = traced(i);
  std::vector<Status> applied(kRequests, Status::Corruption("no answer"));
  Countdown writes(kRequests);
  for (int i = 0; i < kRequests; ++i) {
    WriteSet ws;
    ws.Merge(RelativeKey(*table, i), Row(i));
    client.Apply(target, table->uuid, ws, kTimeoutMicros, traces[static_cast<size_t>(i)], [&, i](Status s) {
      applied[static_cast<size_t>(i)] = std::move(s);
      writes.Done();
    });
  }
  ASSERT_TRUE(writes.Wait());
  for (int i = 0; i < kRequests; ++i) EXPECT_TRUE(applied[static_cast<size_t>(i)].ok()) << i;
  for (int i = 0; i < kRequests; i += 10) {
    auto steps = traces[static_cast<size_t>(i)]->Snapshot().events;
    ASSERT_EQ(steps.size(), 2u) << i;
    EXPECT_EQ(steps[0].activity, "MUTATION message received");
    EXPECT_EQ(steps[1].activity, "Applied 1 writes to the replica's store");
    EXPECT_EQ(steps[1].source, "127.0.0.1");  // the replica's address, not the coordinator's
    EXPECT_LE(steps[0].source_elapsed_micros, steps[1].source_elapsed_micros);
    traces[static_cast<size_t>(i)] = traced(i);  // fresh for the reads
  }

  // Reads of each key and of a missing one, and one of an unknown table
  // among them: that one fails alone.
  std::vector<Result<std::vector<std::optional<std::string>>>> read(kRequests + 1, Status::Corruption("no answer"));
  Countdown reads(kRequests + 1);
  for (int i = 0; i <= kRequests; ++i) {
    const std::string uuid = i == kRequests ? std::string(16, '\x7f') : table->uuid;
    // Odd ones are digest reads (the value's ValueDigest instead of the value).
    client.ReadKeys(target, uuid, {RelativeKey(*table, i), "missing"}, /*digest=*/i % 2 == 1, /*internal=*/false,
                    kTimeoutMicros, traces[static_cast<size_t>(i)], [&, i](Result<std::vector<std::optional<std::string>>> r) {
                      read[static_cast<size_t>(i)] = std::move(r);
                      reads.Done();
                    });
  }
  ASSERT_TRUE(reads.Wait());
  for (int i = 0; i < kRequests; ++i) {
    const auto& r = read[static_cast<size_t>(i)];
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    ASSERT_EQ(r->size(), 2u);
    ASSERT_TRUE((*r)[0].has_value()) << i;
    EXPECT_FALSE((*r)[1].has_value());
    if (i % 2 == 1) {
      // The digest of the replica's stored value of this key.
      auto stored = ReadKeysLocal(db.db().engine(), table->id, {RelativeKey(*table, i)});
      ASSERT_TRUE(stored.ok() && (*stored)[0].has_value());
      EXPECT_EQ(*(*r)[0], ValueDigest(*(*stored)[0])) << i;
      EXPECT_EQ((*r)[0]->size(), 8u);
      continue;
    }
    RowFragment row;
    ASSERT_TRUE(DecodeRowFragment(*(*r)[0], &row).ok());
    ASSERT_EQ(row.cells.size(), 1u);
    EXPECT_EQ(row.cells[0].value, "value-" + std::to_string(i));
  }
  EXPECT_TRUE(read[kRequests].status().IsNotFound()) << read[kRequests].status().ToString();
  for (int i = 0; i <= kRequests; i += 10) {
    std::vector<std::string> activities;
    for (const auto& e : traces[static_cast<size_t>(i)]->Snapshot().events) activities.push_back(e.activity);
    if (i == kRequests) {  // the unknown table: received, then refused
      EXPECT_EQ(activities, std::vector<std::string>{"READ message received"});
    } else {
      EXPECT_EQ(activities, (std::vector<std::string>{"READ message received", "Read 2 keys from the replica's store"}))
          << i;
    }
  }

  EXPECT_EQ(client.requests_sent(), 2u * kRequests + 1);
  // Coalesced: far fewer gRPC calls than requests.
  EXPECT_LT(client.messages_sent(), client.requests_sent() / 2);
  server.Stop();
}

// A client's range read counts as load the replica served
// (replica_reads_per_second, what the placement balancer weighs); a node's
// own read does not: a migration streaming the tablet, a split finding its
// median (seen: a hand split on a node without a copy read the tablet's
// 6,000 partitions one window each from its replica, which then showed 400
// reads/s no client made, and test_hot_tablet_spread's premise failed).
TEST(InternodeTest, ANodesOwnRangeReadsAreNotCountedAsServedReads) {
  testing::TestDatabase db("internode_internal_reads");
  auto table = testing::MakeTable(db.db(), "kv", Distribution::kRange, {"k:int:pk", "v:text:regular"});
  ReplicaService replica(&db.db());
  InternodeServer server(&replica);
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  InternodeClient client;
  const std::string target = "127.0.0.1:" + std::to_string(server.port());
  // The total behind replica_reads_per_second (whose window counts whole
  // seconds only).
  auto served = [&] { return db->MetricsOf(table->id)->replica_reads.load(); };
  auto read_range = [&](bool internal) {
    RangeQuery q;
    q.table_uuid = table->uuid;
    q.limit = 4;
    q.internal = internal;
    Countdown done(1);
    Result<RangeBatch> answer = Status::Corruption("no answer");
    client.ReadRange(target, q, kTimeoutMicros, nullptr, [&](Result<RangeBatch> r) {
      answer = std::move(r);
      done.Done();
    });
    EXPECT_TRUE(done.Wait());
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
  };
  // Key lookups the same: internal ones are a node's own, or a slice read's
  // partition header asked with its first window (which counts the read).
  auto read_keys = [&](bool internal) {
    Countdown done(1);
    Result<std::vector<std::optional<std::string>>> answer = Status::Corruption("no answer");
    client.ReadKeys(target, table->uuid, {RelativeKey(*table, 1)}, /*digest=*/false, internal, kTimeoutMicros, nullptr,
                    [&](Result<std::vector<std::optional<std::string>>> r) {
                      answer = std::move(r);
                      done.Done();
                    });
    EXPECT_TRUE(done.Wait());
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
  };
  for (int i = 0; i < 20; ++i) {
    read_range(/*internal=*/true);
    read_keys(/*internal=*/true);
  }
  EXPECT_EQ(served(), 0u) << "a node's own reads counted as served load";
  for (int i = 0; i < 3; ++i) read_range(/*internal=*/false);
  EXPECT_EQ(served(), 3u) << "client reads not counted";
  for (int i = 0; i < 2; ++i) read_keys(/*internal=*/false);
  EXPECT_EQ(served(), 5u) << "client key lookups not counted";
  server.Stop();
}

// A slice's partition header and static row travel with its first window
// (RangeQuery::keys): one gRPC call answers the keys below the range and the
// range itself, counted as one request served; a key within the range is
// refused.
TEST(InternodeTest, ARangeReadAnswersThePointKeysItCarriesInTheSameCall) {
  testing::TestDatabase db("internode_range_with_keys");
  auto table = testing::MakeTable(db.db(), "kv", Distribution::kRange, {"k:int:pk", "v:text:regular"});
  ReplicaService replica(&db.db());
  InternodeServer server(&replica);
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  InternodeClient client;
  const std::string target = "127.0.0.1:" + std::to_string(server.port());
  // Rows 10 (below the range), 21, 22, 23 (in it) and 30 (at its end); 11 is
  // a point key with no row.
  auto key = [&](int k) { return RelativeKey(*table, k); };
  WriteSet ws;
  for (int k : {10, 21, 22, 23, 30}) ws.Merge(key(k), Row(k));
  Countdown written(1);
  Status applied = Status::Corruption("no answer");
  client.Apply(target, table->uuid, ws, kTimeoutMicros, nullptr, [&](Status s) {
    applied = std::move(s);
    written.Done();
  });
  ASSERT_TRUE(written.Wait());
  ASSERT_TRUE(applied.ok()) << applied.ToString();

  auto read = [&](std::vector<std::string> keys, bool reverse, bool digest = false) {
    RangeQuery q;
    q.digest = digest;
    q.table_uuid = table->uuid;
    q.lower = RelativePosition(*table, 20);
    q.upper = RelativePosition(*table, 30);
    q.from = reverse ? q.upper : q.lower;
    q.reverse = reverse;
    q.from_end = reverse;
    q.limit = 10;
    q.keys = std::move(keys);
    Countdown done(1);
    Result<RangeBatch> answer = Status::Corruption("no answer");
    client.ReadRange(target, q, kTimeoutMicros, nullptr, [&](Result<RangeBatch> r) {
      answer = std::move(r);
      done.Done();
    });
    EXPECT_TRUE(done.Wait());
    return answer;
  };
  const uint64_t messages_before = client.messages_sent();
  for (bool reverse : {false, true}) {
    auto batch = read({key(10), key(11)}, reverse);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    std::vector<std::string> keys;
    for (const auto& [k, v] : batch->entries) keys.push_back(k);
    // Only the range's keys: a reverse read stops at `lower`, above the point keys.
    EXPECT_EQ(keys, reverse ? std::vector<std::string>({key(23), key(22), key(21)})
                            : std::vector<std::string>({key(21), key(22), key(23)}));
    ASSERT_EQ(batch->key_values.size(), 2u);
    ASSERT_TRUE(batch->key_values[0].has_value());
    EXPECT_EQ(*batch->key_values[0], Row(10));
    EXPECT_FALSE(batch->key_values[1].has_value());
  }
  EXPECT_EQ(client.messages_sent() - messages_before, 2u);
  EXPECT_EQ(db->MetricsOf(table->id)->replica_reads.load(), 2u);
  // A digest read of the same window: its WindowDigest alone, which a
  // window with one value more does not share.
  auto data = read({key(10), key(11)}, false);
  auto digest = read({key(10), key(11)}, false, /*digest=*/true);
  ASSERT_TRUE(data.ok() && digest.ok());
  EXPECT_FALSE(data->digest.has_value());
  ASSERT_TRUE(digest->digest.has_value());
  EXPECT_EQ(digest->digest->size(), 8u);
  EXPECT_EQ(*digest->digest, WindowDigest(*data));
  EXPECT_TRUE(digest->entries.empty() && digest->key_values.empty());
  RangeBatch changed = *data;
  changed.entries.back().second += "x";
  EXPECT_NE(WindowDigest(changed), *digest->digest);
  changed = *data;
  changed.key_values[1] = "";
  EXPECT_NE(WindowDigest(changed), *digest->digest);
  // Without keys, none come back; a key within the range is refused.
  auto plain = read({}, false);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->key_values.empty());
  auto inside = read({key(22)}, false);
  ASSERT_FALSE(inside.ok());
  EXPECT_TRUE(inside.status().IsInvalidArgument()) << inside.status().ToString();
  server.Stop();
}

// What another node sends is checked before any of it is applied: a write
// whose key is not a row of the table, or whose value is not what its key
// holds, is refused with InvalidArgument and the rest of its write set is
// not applied either; so is a range deletion ending before its start (which
// RocksDB would half apply and then refuse every write). The table stays
// readable and writable. (Found by fuzz/internode_fuzzer.cc.)
TEST(InternodeTest, WritesThatWouldMakeAKeyUnreadableAreRefusedWholeAndNothingIsApplied) {
  testing::TestDatabase db("internode_checked_writes");
  auto table = testing::MakeTable(db.db(), "kv", Distribution::kRange, {"k:int:pk", "v:text:regular"});
  ReplicaService replica(&db.db());
  InternodeServer server(&replica);
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  InternodeClient client;
  const std::string target = "127.0.0.1:" + std::to_string(server.port());
  auto apply = [&](const WriteSet& ws) {
    Countdown done(1);
    Status answer = Status::Corruption("no answer");
    client.Apply(target, table->uuid, ws, kTimeoutMicros, nullptr, [&](Status s) {
      answer = std::move(s);
      done.Done();
    });
    EXPECT_TRUE(done.Wait());
    return answer;
  };
  auto stored = [&](int k) {
    auto values = ReadKeysLocal(db.db().engine(), table->id, {RelativeKey(*table, k)});
    EXPECT_TRUE(values.ok());
    return values.ok() && (*values)[0].has_value();
  };
  std::string header;  // a partition header's value, at a row's key
  EncodePartitionHeader(PartitionHeader{}, &header);
  const std::vector<std::pair<std::string, WriteSet>> refused = [&] {
    std::vector<std::pair<std::string, WriteSet>> cases;
    WriteSet garbage_value, garbage_key, header_at_row, backwards;
    garbage_value.Merge(RelativeKey(*table, 1), Row(1));
    garbage_value.Merge(RelativeKey(*table, 2), "\x01not a fragment");
    cases.emplace_back("a value that does not decode", garbage_value);
    garbage_key.Merge(RelativeKey(*table, 1), Row(1));
    garbage_key.Merge("no row of the table", Row(2));
    cases.emplace_back("a key that is not a row", garbage_key);
    header_at_row.Merge(RelativeKey(*table, 1), Row(1));
    header_at_row.Merge(RelativeKey(*table, 2), header);
    cases.emplace_back("a partition header at a row's key", header_at_row);
    backwards.Merge(RelativeKey(*table, 1), Row(1));
    backwards.DeleteRange(RelativeKey(*table, 9), RelativeKey(*table, 5));
    cases.emplace_back("a range deletion ending before its start", backwards);
    return cases;
  }();
  for (const auto& [what, ws] : refused) {
    Status s = apply(ws);
    EXPECT_TRUE(s.IsInvalidArgument()) << what << ": " << s.ToString();
    EXPECT_FALSE(stored(1)) << what << ": the valid write of the refused set was applied";
  }
  WriteSet good;
  good.Merge(RelativeKey(*table, 1), Row(1));
  good.DeleteRange(RelativeKey(*table, 5), RelativeKey(*table, 9));
  ASSERT_TRUE(apply(good).ok());
  EXPECT_TRUE(stored(1));
  auto row = db->ReadRow(table, {testing::Int(1)}, {}, RequestConsistency{});
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_TRUE(row->has_value());
  server.Stop();
}

// Paxos state another node sends (a migration's import) is checked whole
// before any of it is imported: a row that does not decode, or whose
// proposal would write what no key can hold, is refused with
// InvalidArgument, since a later round would commit that proposal here.
TEST(ReplicaServiceTest, ImportedPaxosStateIsCheckedWholeBeforeAnyOfItIsImported) {
  testing::TestDatabase db("replica_paxos_import");
  auto table = testing::MakeTable(db.db(), "kv", Distribution::kRange, {"k:int:pk", "v:text:regular"});
  ReplicaService replica(&db.db());
  const std::string ballot = NewTimeUuid();
  PaxosRequest propose;
  propose.phase = PaxosRequest::Phase::kPropose;
  propose.table_uuid = table->uuid;
  propose.partition = RelativePosition(*table, 1);
  propose.ballot = ballot;
  propose.update.Merge(RelativeKey(*table, 1), Row(1));
  auto accepted = replica.Paxos(propose);
  ASSERT_TRUE(accepted.ok() && accepted->ok) << accepted.status().ToString();
  auto exported = replica.ExportPaxosState(table->uuid, "", "");
  ASSERT_TRUE(exported.ok());
  ASSERT_EQ(exported->size(), 1u);
  const std::string good_row = exported->front().second;
  // The same row with a proposal that writes a value no row can hold.
  WriteSet garbage;
  garbage.Merge(RelativeKey(*table, 2), "\x01not a fragment");
  std::string bad_row(1, '\x01');
  for (const std::string& field : {ballot, ballot, EncodePaxosUpdate(garbage), std::string(), std::string()}) {
    PutVarint64(&bad_row, field.size());
    bad_row += field;
  }
  auto stored = [&] {
    auto rows = replica.ExportPaxosState(table->uuid, "", "");
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows->size() : 0;
  };
  for (const std::string& bad : {bad_row, std::string("not a row")}) {
    Status s = replica.ImportPaxosState(
        table->uuid, {{RelativePosition(*table, 3), good_row}, {RelativePosition(*table, 4), bad}});
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(stored(), 1u) << "a row of a refused import was imported";
  }
  ASSERT_TRUE(replica.ImportPaxosState(table->uuid, {{RelativePosition(*table, 3), good_row}}).ok());
  EXPECT_EQ(stored(), 2u);
}

TEST(InternodeTest, EveryRequestToANodeThatIsNotThereEndsWithAnError) {
  InternodeClient client;
  // Nothing listens there: the calls in flight fail, and so do the requests
  // queued behind them, each once.
  std::vector<Status> statuses(10, Status::OK());
  Countdown done(10);
  for (int i = 0; i < 10; ++i) {
    WriteSet ws;
    ws.Merge("key-" + std::to_string(i), Row(i));  // no replica there to check it
    client.Apply("127.0.0.1:1", std::string(16, '\x01'), ws, 200'000, nullptr, [&, i](Status s) {
      statuses[static_cast<size_t>(i)] = std::move(s);
      done.Done();
    });
  }
  ASSERT_TRUE(done.Wait());
  for (const auto& s : statuses) EXPECT_FALSE(s.ok());
}

TEST(InternodeTest, TheClientEndsOnlyOnceItsCallsInFlightHaveEnded) {
  // A node shutting down drops its client while calls to a silent peer wait
  // for their deadline: the destructor waits for their callbacks (which use
  // the client's lanes), so none runs on a client that is gone.
  auto statuses = std::make_shared<std::vector<Status>>(10, Status::OK());
  auto done = std::make_shared<Countdown>(10);
  {
    InternodeClient client;
    for (int i = 0; i < 10; ++i) {
      WriteSet ws;
      ws.Merge("key-" + std::to_string(i), Row(i));  // no replica there to check it
      client.Apply("127.0.0.1:1", std::string(16, '\x01'), ws, 300'000, nullptr, [statuses, done, i](Status s) {
        (*statuses)[static_cast<size_t>(i)] = std::move(s);
        done->Done();
      });
    }
  }
  ASSERT_TRUE(done->Wait());
  for (const auto& s : *statuses) EXPECT_FALSE(s.ok());
}

// A peer that speaks just enough HTTP/2 (RFC 9113) for gRPC to call it
// connected, and answers its keepalive PINGs, but never answers a call: a
// node whose process is up and whose requests go nowhere.
class SilentHttp2Peer {
 public:
  SilentHttp2Peer() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(listener_, 4), 0);
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~SilentHttp2Peer() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  static std::string FrameHeader(uint32_t length, uint8_t type, uint8_t flags) {
    std::string h;
    h.push_back(static_cast<char>(length >> 16));
    h.push_back(static_cast<char>(length >> 8));
    h.push_back(static_cast<char>(length));
    h.push_back(static_cast<char>(type));
    h.push_back(static_cast<char>(flags));
    h.append(4, '\0');  // stream 0
    return h;
  }
  // Polls in 50 ms steps so that the destructor's stop is seen.
  bool Readable(int fd) {
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 50) > 0) return true;
    }
    return false;
  }
  void Serve() {
    if (!Readable(listener_)) return;
    const int fd = accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    const std::string settings = FrameHeader(0, 0x4, 0);
    (void)!write(fd, settings.data(), settings.size());
    std::string in;
    size_t at = 24;  // the client's connection preface
    char buf[4096];
    while (Readable(fd)) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      while (in.size() >= at + 9) {
        const uint32_t length = (static_cast<uint8_t>(in[at]) << 16) | (static_cast<uint8_t>(in[at + 1]) << 8) |
                                static_cast<uint8_t>(in[at + 2]);
        if (in.size() < at + 9 + length) break;
        const uint8_t type = static_cast<uint8_t>(in[at + 3]), flags = static_cast<uint8_t>(in[at + 4]);
        std::string reply;
        if (type == 0x4 && !(flags & 0x1)) reply = FrameHeader(0, 0x4, 0x1);  // SETTINGS: ack
        if (type == 0x6 && !(flags & 0x1)) reply = FrameHeader(8, 0x6, 0x1) + in.substr(at + 9, 8);  // PING: ack
        if (!reply.empty()) (void)!write(fd, reply.data(), reply.size());
        at += 9 + length;  // HEADERS and DATA of calls: never answered
      }
    }
    close(fd);
  }

  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(InternodeTest, ACallToAPeerThatNeverAnswersEndsAtItsDeadline) {
  // The coordinator's write and read time-outs are its calls' deadlines: a
  // replica that is connected but silent must end each call by its
  // deadline, not by the connection's keepalive (this peer answers those)
  // or never.
  auto statuses = std::make_shared<std::vector<Status>>(4, Status::OK());
  auto done = std::make_shared<Countdown>(4);
  InternodeClient client;
  // Made after the client, so gone first: should a call outlive the test,
  // the peer's closed connection ends it before the client waits for it.
  SilentHttp2Peer peer;
  for (int i = 0; i < 4; ++i) {
    WriteSet ws;
    ws.Merge("key-" + std::to_string(i), Row(i));  // no replica there to check it
    auto record = [statuses, done, i](Status s) {
      (*statuses)[static_cast<size_t>(i)] = std::move(s);
      done->Done();
    };
    if (i % 2 == 0) {
      client.Apply(peer.target(), std::string(16, '\x01'), ws, 300'000, nullptr, record);
    } else {
      client.Ping(peer.target(), std::string(16, 'h'), 300'000, record);
    }
  }
  ASSERT_TRUE(done->Wait());
  for (const auto& s : *statuses) {
    EXPECT_EQ(s.code(), Status::Code::kBusy) << s.ToString();  // DEADLINE_EXCEEDED
    EXPECT_NE(s.message().find("timed out"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace tessera::cluster
