// Replica: who serves a request to a tablet. On one node (and for a cluster
// node's system tables) the LocalReplica over the node's StorageEngine; on a
// cluster node, for the tablets of replicated keyspaces, a coordinator made
// for the request by the cluster layer (cluster/replicated_tablet.h, chosen
// through tablets/tablet_map.h's ReplicaResolver), which is why writes
// travel as WriteSets (self-contained, shippable) and not as calls into
// RocksDB. Tablet maps hold none: the Coordinator (coordinator/coordinator.h)
// chooses one per request; Database uses only its LocalReplica.
//
// Every read and write takes the request's consistency (tablets/
// request_consistency.h) as a parameter: a replicated tablet waits for as
// many replicas as it names; the local replica ignores it. An iterator keeps
// the consistency it was made with for every step it reads.
//
// Thread safety: implementations are thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "storage/storage_engine.h"
#include "tablets/request_consistency.h"

namespace tessera {

// One window of a range read: up to `limit` keys of [lower, upper) (absolute
// storage keys; empty upper: unbounded) starting at `from` in the read's
// direction. Follows a replicated tablet's range-read step (issue 28 item 2).
struct KeyWindowRead {
  std::string lower, upper;
  std::string from;          // within [lower, upper)
  bool from_inclusive = true;
  bool reverse = false;      // descending from `from`
  bool from_end = false;     // reverse only: from `upper` down (`from` ignored)
  uint32_t limit = 512;      // keys, >= 1
  // Point keys read with the window, from the same snapshot: a slice's
  // partition header and static row, so that one request per replica
  // answers the whole slice (issue 28 item 2). Ascending, each below
  // `lower`; empty for a range read's windows.
  std::vector<std::string> keys;
};

// A window's keys, complete for its stretch: every key between its first
// entry and its last (or the range's end when `more` is false) is in it.
struct KeyWindow {
  std::vector<std::pair<std::string, std::string>> entries;  // absolute keys, in the read's direction
  bool more = false;  // keys may follow the last entry in that direction
  // One per KeyWindowRead::keys (nullopt: no value stored), or empty when
  // they were not read with the window (a replica of an older release
  // ignores them; the caller then reads them on their own).
  std::vector<std::optional<std::string>> key_values;
};

// The lower bound an iterator for `read` needs: read.lower, or below it the
// least of read.keys.
const std::string& IteratorLower(const KeyWindowRead& read);

// Reads one window from `it`, an iterator bounded to [IteratorLower(read),
// read.upper) (in its own key space: with `strip_key_bytes`, the read's
// keys and bounds are absolute): first each of read.keys (into
// key_values), then seeks to `read.from` (or the end) and takes up to
// read.limit keys of [lower, upper), each with its first `strip_key_bytes`
// bytes removed (4: table-relative keys). Errors: the iterator's status;
// InvalidArgument when read.keys do not ascend below read.lower.
Result<KeyWindow> ReadWindowFrom(KvIterator* it, const KeyWindowRead& read, size_t strip_key_bytes = 0);

class Replica {
 public:
  virtual ~Replica() = default;
  // Applies the writes atomically and durably (see StorageEngine durability).
  [[nodiscard]] virtual Status Apply(const WriteSet& writes, const RequestConsistency& consistency) = 0;
  // As Apply, but answers through `done` instead of returning: exactly once,
  // on this thread or on the thread a replica's answer arrives on, so that
  // the caller's thread never waits for another node. `writes` need not
  // outlive the call. The default applies here and then calls `done`.
  virtual void ApplyAsync(const WriteSet& writes, const RequestConsistency& consistency,
                          std::function<void(Status)> done) {
    done(Apply(writes, consistency));
  }
  // NotFound when the key has no value.
  [[nodiscard]] virtual Status Get(std::string_view key, std::string* value, const RequestConsistency& consistency) = 0;
  // Several keys on one snapshot; see StorageEngine::MultiGet.
  virtual void MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                        std::vector<Status>* statuses, const RequestConsistency& consistency) = 0;
  // As MultiGet, but answers through `done` instead of filling out-params:
  // exactly once, on this thread or on the thread a replica's answer (or a
  // speculative retry's timer) arrives on, so that the caller's thread never
  // waits for another node (issue 28 item 1). `values` and `statuses` are
  // in `keys` order, as MultiGet's. The default reads here and then calls
  // `done`.
  using MultiGetDone = std::function<void(std::vector<std::string> values, std::vector<Status> statuses)>;
  virtual void MultiGetAsync(std::vector<std::string> keys, const RequestConsistency& consistency,
                             MultiGetDone done) {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<std::string> values;
    std::vector<Status> statuses;
    MultiGet(views, &values, &statuses, consistency);
    done(std::move(values), std::move(statuses));
  }
  // Iterates [lower, upper) on a snapshot taken now.
  virtual std::unique_ptr<KvIterator> NewIterator(std::string lower, std::string upper,
                                                  const RequestConsistency& consistency) = 0;
  // One window of a range read (KeyWindowRead), answered through `done`
  // exactly once, on this thread or on the thread a replica's answer (or a
  // speculative retry's timer) arrives on: the caller's thread never waits
  // for another node (issue 28 item 1, for slices). The default reads it
  // here through NewIterator. Errors: those of the iterator; a replicated
  // tablet's Unavailable, ReadTimeout.
  using WindowDone = std::function<void(Result<KeyWindow>)>;
  virtual void ReadWindowAsync(const KeyWindowRead& read, const RequestConsistency& consistency, WindowDone done);
  // Approximate bytes stored in [begin, end); with `include_memtables`
  // false, only what has been flushed (RocksDB's memtable estimate is coarse
  // for small ranges before RocksDB 9.8).
  virtual uint64_t ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables = true) = 0;
  // The host ids (16 bytes) of the nodes holding this tablet, as far as
  // known without waiting on anything; empty: this node alone (no cluster),
  // or not known yet. For system.tablets.
  virtual std::vector<std::string> Hosts() { return {}; }
  // Whether this node stores the tablet's data (is one of its replicas), as
  // far as known without waiting: what a search of a node-local structure
  // (db/vector_index.h) may answer for. The local replica: always.
  virtual bool StoredHere() { return true; }
  // ANN candidates of this tablet from another node (db/vector_index.h):
  // the absolute storage keys of the `k` rows nearest `query` by vector
  // index `index` among the tablet's rows, nearest first, as one of its
  // replicas' index holds them (the fastest answering, as a read at ONE
  // picks). nullopt: this node stores the tablet, so the caller searches
  // its own index (always, for the local replica). Waits for the answer.
  // Errors: Unavailable, a time-out or the replica's error.
  virtual Result<std::optional<std::vector<std::string>>> SearchVectors(const std::string& /*index*/,
                                                                        const std::vector<float>& /*query*/,
                                                                        size_t /*k*/) {
    return std::optional<std::vector<std::string>>();
  }
  // Lightweight transactions (issue 30): prepares a Paxos round on the
  // replicas of the partition whose position is `partition` (a storage-key
  // prefix within this tablet), at `serial` (SERIAL or LOCAL_SERIAL), after
  // finishing any round left in progress there. An Apply whose consistency
  // carries the round then proposes and commits its writes. nullopt: this
  // replica is the only one and local, so the caller serializes conditional
  // statements itself (a lock).
  // `for_read`: a SERIAL read's round (its time-out is a ReadTimeout).
  // Errors: Unavailable; WriteTimeout (write type CAS), or ReadTimeout for a
  // read, when too few replicas promised.
  // Answered through `done` exactly once, on any thread, without holding
  // the calling thread while replicas answer (issue 28 item 1); `partition`
  // is copied.
  using PaxosBegun = std::function<void(Result<std::optional<PaxosRound>>)>;
  virtual void BeginPaxosAsync(std::string_view /*partition*/, ConsistencyLevel /*serial*/, bool /*for_read*/,
                               PaxosBegun done) {
    done(std::optional<PaxosRound>());
  }
};

// The single-node replica: the local StorageEngine.
// REQUIRES: the engine outlives the replica.
class LocalReplica : public Replica {
 public:
  explicit LocalReplica(StorageEngine* engine) : engine_(engine) {}
  Status Apply(const WriteSet& writes, const RequestConsistency& consistency) override;
  Status Get(std::string_view key, std::string* value, const RequestConsistency& consistency) override;
  void MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                std::vector<Status>* statuses, const RequestConsistency& consistency) override;
  std::unique_ptr<KvIterator> NewIterator(std::string lower, std::string upper,
                                          const RequestConsistency& consistency) override;
  uint64_t ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables = true) override;

 private:
  StorageEngine* engine_;
};

}  // namespace tessera
