// Replicated tablets: the coordinator of one request to a tablet of a
// replicated keyspace on a cluster node, behind the Replica interface
// (tablets/replica.h). ClusterReplicaResolver makes one for each request
// Database sends to such a tablet, from the schema the request reads; no
// tablet map holds one. This node coordinates: a write goes
// to every live replica of the tablet and succeeds once the request's
// consistency level (tablets/request_consistency.h, passed with each call) has acknowledged it; a
// read asks as many replicas as the level needs, reconciles their answers
// key by key (the storage merge operator: last write wins per cell,
// deletions shadow), writes the reconciled value back to every asked replica
// that held something else (blocking read repair) and only then answers.
// So QUORUM writes with QUORUM reads read their writes, and a value a read
// returned is on a quorum afterwards (monotonic reads).
//
// Follows Cassandra 4.1's coordinator (StorageProxy: mutate, fetchRows,
// BlockingReadRepair). A key read (ReadKeysAsync) asks one replica for data and
// the others for digests (the 8-byte XXH3 of each stored value); when no
// data came back or a digest disagrees, it asks again for data from all and
// reconciles; the windows of slices and scan pages read without a thread
// (ReadWindowAsync) the same, with one digest per window (WindowDigest).
// A blocking range read's windows (NewIterator) still take data from every
// replica asked (so does Cassandra's range read).
//
// Writes (issue 28, item 1): ApplyAsync returns once the writes are sent;
// the acknowledgement that completes the level (or the last answer, each
// internode call carrying the write time-out as its deadline) answers the
// caller from its thread; so does a counter increment, from its leader's
// answer and then its shards', and a Paxos proposal, from its accept and
// commit rounds'. Apply waits for it (the callers that hold a thread
// still). Key reads likewise: MultiGetAsync answers from the thread of the
// replica answer that completes the read (its digest round, a full round
// after a mismatch, the read repair), its speculative retry fired by
// ReplicationServices::delayed_calls; MultiGet and Get wait for it on the
// caller's thread, and range reads (NewIterator) read there; one range-read
// window (ReadWindowAsync, a slice's) answers as a key read, its digest
// round comparing WindowDigests (cluster/replica_reads.h).
//
// Replica choice and speculative retry (issue 28, items 2 and 3): a read asks
// this node first when it is a replica, then the replicas that answered
// fastest (cluster/replica_latency.h: moving average, requests in flight, a
// missed answer marks a peer slow for 2 s); when the asked ones have not all
// answered within the table's speculative_retry (cluster/speculative_retry.h,
// '99p' by default), or one answered with an error, it also asks the next
// live replica, and it answers from the first block_for replicas that do.
// A replica under SIGSTOP or behind a partition costs one threshold, not the
// read time-out. Writes go to every replica and wait for block_for, as before;
// their answers feed the same estimate.
//
// Counters (issue 30 item 2, Cassandra's counter write path): a write that
// increments a counter goes first to one leader replica (this node when it
// is a live replica the level counts, else the fastest), which turns each
// increment into its next counter shard and stores it
// (ReplicaService::LeadCounterWrite, storage/counter_shards.h); the shards
// then go to the other replicas as an ordinary write, the leader counting
// as one acknowledgement. A leader that does not answer leaves the outcome
// unknown: WriteTimeout, never retried on another leader. Shards are
// idempotent, so hints and read repair never count an increment twice.
// ANY is refused for counter tables (InvalidArgument), as Cassandra does.
//
// Hinted handoff: a replica that is down when a write is sent, or fails or
// does not answer within the write time-out, gets a hint
// (cluster/hint_store.h), delivered when it is back (hint_replayer.h). At
// ANY a stored hint counts as the acknowledgement.
//
// Errors (Status codes mapped to CQL in error_mapping.h): Unavailable
// before anything is sent when fewer replicas are alive than the level
// needs; WriteTimeout / ReadTimeout when fewer answered within the
// time-out; InvalidArgument for a level the operation does not take.
// Which replicas hold a tablet: TabletPlacements (cluster/tablet_placement.h),
// resolved on first use. Liveness: Membership (etcd leases).
//
// Thread safety: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/delayed_calls.h"
#include "cluster/hint_store.h"
#include "cluster/internode_transport.h"
#include "cluster/membership.h"
#include "cluster/migrations_in_hand.h"
#include "cluster/paxos_ballot.h"
#include "cluster/placement_fence.h"
#include "cluster/paxos_coordinator.h"
#include "cluster/reconciling_iterator.h"
#include "cluster/replica_latency.h"
#include "cluster/replication_strategy.h"
#include "cluster/stream_rate_limiter.h"
#include "cluster/tablet_placement.h"
#include "tablets/tablet_map.h"
#include "types/speculative_retry.h"

namespace tessera {
class Failpoints;
}

namespace tessera {
class Coordinator;
class Database;
struct TableMetrics;
}

namespace tessera::cluster {

class ReplicaService;

// What every replicated tablet of a node shares. REQUIRES: every pointer
// outlives the tablets.
struct ReplicationServices {
  Database* db = nullptr;
  // The node's coordinator above db: the balancer leader's median splits of
  // tablets this node stores no copy of read through it.
  Coordinator* coordinator = nullptr;
  Membership* membership = nullptr;
  TabletPlacements* placements = nullptr;
  InternodeTransport* client = nullptr;
  std::shared_ptr<HintStore> hints;  // null: no hinted handoff
  std::string self_host_id;  // 16 bytes
  std::string local_dc;
  int64_t write_timeout_micros = 2'000'000;  // Cassandra's write_request_timeout
  int64_t read_timeout_micros = 5'000'000;   // Cassandra's read_request_timeout
  // Keys per replica per range read step: the first window of an iterator
  // asks for first_read_window_keys, each next one for 4 times the last, up
  // to read_window_keys, so a short slice (LIMIT 10, a partition of a few
  // rows) moves a few keys, not 512, while a long scan soon reads in full windows.
  uint32_t first_read_window_keys = 32;
  uint32_t read_window_keys = 512;
  std::atomic<uint64_t> read_repairs{0};      // keys written back to a replica by a read
  std::atomic<uint64_t> write_timeouts{0}, read_timeouts{0}, unavailables{0};
  // Writes are inside it while they run; TabletMapSync drains it after
  // applying a placement change, so that its acknowledgement of a migration
  // stage means no write routed by an older stage is in flight.
  PlacementFence placement_fence;
  MigrationsInHand migrations_in_hand;   // moves this node drives (cluster/tablet_migration.h)
  // What the moves this node drives stream: one budget for all of them
  // (null: unlimited), and the totals /metrics shows.
  std::shared_ptr<StreamRateLimiter> stream_limiter;
  std::atomic<uint64_t> streamed_bytes{0}, streamed_keys{0};
  Failpoints* failpoints = nullptr;      // null: none (common/failpoints.h)
  // The timers of key reads (their speculative retry). Null: key reads
  // never speculate. REQUIRES: stopped before `client` goes (a timer may
  // send a request).
  std::unique_ptr<DelayedCalls> delayed_calls;
  ReplicaLatency latency;                // what reads and writes saw of each peer
  std::atomic<uint64_t> speculative_retries{0};  // reads that asked one more replica
  // Key reads and windows answered by one replica's data and the others' digests, and
  // those whose digests disagreed (then read again in full, and repaired).
  std::atomic<uint64_t> digest_reads{0}, digest_mismatches{0};
  // Tablet requests (a write, a key read, a range read step) this node
  // coordinated, and those of them it holds no replica of: forwarded, every
  // replica remote (what token-aware drivers avoid; cluster/routing_tokens.h).
  std::atomic<uint64_t> coordinated{0}, forwarded{0};
  // Lightweight transactions (cluster/paxos_coordinator.h): this node's
  // replica side, asked directly when it is a participant, and its ballots.
  ReplicaService* local_replica_service = nullptr;
  std::unique_ptr<BallotClock> ballot_clock;
  std::atomic<uint64_t> paxos_rounds{0}, paxos_round_trips{0}, paxos_preempted{0};
};

// The placement of `table` (a table of a replicated keyspace): the cached
// one, else read from etcd, else made from the members of the moment (one
// tablet per local tablet, PlaceReplicas) and created there, the first
// creator winning. Called by a tablet's first request, and right after
// CREATE TABLE so that drivers' routing tokens follow the new table
// (cluster/routing_tokens.h). Errors: those of TabletPlacements::Get and
// ParseReplication, NotFound for a dropped keyspace.
Result<std::shared_ptr<const std::vector<TabletReplicas>>> ResolvePlacement(ReplicationServices* services,
                                                                            std::shared_ptr<const TableSchema> table);

class ReplicatedTablet : public Replica, public std::enable_shared_from_this<ReplicatedTablet> {
 public:
  // `start`, `end`: the tablet's storage-key bounds on this node.
  ReplicatedTablet(ReplicationServices* services, std::shared_ptr<const TableSchema> table, std::string start,
                   std::string end);
  Status Apply(const WriteSet& writes, const RequestConsistency& consistency) override;
  // A plain write answers `done` from the thread of the replica answer that
  // completes its level (or of its time-out): no thread waits for it; so
  // does a counter increment (its leader's answer, then its shards') and a
  // Paxos proposal (its accept round's answers, then its commit's).
  void ApplyAsync(const WriteSet& writes, const RequestConsistency& consistency,
                  std::function<void(Status)> done) override;
  Status Get(std::string_view key, std::string* value, const RequestConsistency& consistency) override;
  void MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                std::vector<Status>* statuses, const RequestConsistency& consistency) override;
  // REQUIRES: the tablet is owned by a shared_ptr (the resolver makes it so).
  void MultiGetAsync(std::vector<std::string> keys, const RequestConsistency& consistency,
                     MultiGetDone done) override;
  // The iterator keeps this tablet alive while it reads (when a shared_ptr
  // owns it, as the resolver's do).
  std::unique_ptr<KvIterator> NewIterator(std::string lower, std::string upper,
                                          const RequestConsistency& consistency) override;
  // One window, as one step of NewIterator's reads (data from every replica
  // asked, reconciled, read repair before the answer), answered from the
  // thread that completes it, with the key reads' speculative retry.
  // REQUIRES: the tablet is owned by a shared_ptr (the resolver makes it so).
  void ReadWindowAsync(const KeyWindowRead& read, const RequestConsistency& consistency, WindowDone done) override;
  // This node's share only (its local storage).
  uint64_t ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables = true) override;

  // From the resolved or cached placement only (no etcd request).
  std::vector<std::string> Hosts() override;
  bool StoredHere() override;
  Result<std::optional<std::vector<std::string>>> SearchVectors(const std::string& index, const std::vector<float>& query,
                                                                size_t k) override;
  // Prepares a Paxos round over the tablet's live replicas (natural ones at
  // `serial`'s quorum, plus every pending one); an Apply carrying the round
  // proposes and commits through it (cluster/paxos_coordinator.h).
  // It answers from the thread of the answer that completes the prepare.
  void BeginPaxosAsync(std::string_view partition, ConsistencyLevel serial, bool for_read,
                       PaxosBegun done) override;

  // The tablet's replicas (host ids), resolving the placement if needed.
  Result<std::vector<std::string>> Replicas();
  // The placement tablet holding this node's tablet, with its transition.
  Result<TabletReplicas> PlacementTablet();

  // A replica a request goes to (defined in replicated_tablet_internal.h).
  struct Target;

 private:
  // The replicas reads go to (a migration's stage decides which).
  Result<std::vector<Target>> Targets();
  std::vector<Target> TargetsOf(const std::vector<std::string>& replicas);
  void CountCoordinated(const std::vector<Target>& targets);  // ReplicationServices::coordinated, forwarded
  Result<KeyWindow> ReadWindow(const RangeQuery& query, const RequestConsistency& consistency);
  // Key reads (replicated_tablet_async_reads.cc); `done` runs once, on the
  // thread that completes the read. Cassandra's digest read: the first
  // replica asked (this node when it is one) answers data, the others
  // digests (replica_reads.h ValueDigest), a speculative or extra one data;
  // when no data came back or a digest disagrees, ReadKeysInFullAsync asks
  // again for data from every replica, reconciles and repairs. `counted`:
  // the read was already counted in ReplicationServices::coordinated.
  using KeysDone = std::function<void(Result<std::vector<std::optional<std::string>>>)>;
  void ReadKeysAsync(std::vector<std::string> relative_keys, const RequestConsistency& consistency, KeysDone done);
  void ReadKeysInFullAsync(std::vector<std::string> relative_keys, const RequestConsistency& consistency,
                           bool counted, KeysDone done);
  // A window's full round (ReadWindowAsync's digest round disagreed, or one
  // replica is asked): data from every replica asked, reconciled and
  // repaired before `done`.
  void ReadWindowInFullAsync(std::shared_ptr<const RangeQuery> query, const RequestConsistency& consistency,
                             bool counted, WindowDone done);
  // Writes each of `repairs` back to the replica of `asked` at its index;
  // ReadTimeout (at `consistency`) unless all acknowledge.
  Status Repair(const std::vector<const Target*>& asked, const std::vector<WriteSet>& repairs,
                const RequestConsistency& consistency);
  // Asks every replica of `asked` (remote ones through `remote`, this node
  // through `local`) and waits for all within the read time-out; their
  // answers in `asked` order, or ReadTimeout.
  template <typename T>
  using AskRemote = std::function<void(const std::string& endpoint, std::function<void(Result<T>)> done)>;
  // Asks the first plan.block_for of `*asked` (the candidates, in order),
  // and the next ones on a speculative retry or an error answer, until
  // block_for answered or the read time-out; `*asked` becomes the replicas
  // whose answers are returned (in candidate order), or ReadTimeout.
  template <typename T>
  Result<std::vector<T>> AskAll(std::vector<const Target*>* asked, const ConsistencyPlan& plan,
                                const RequestConsistency& consistency, const AskRemote<T>& remote,
                                const std::function<Result<T>()>& local);
  // Microseconds a read waits before it speculates; -1: never.
  int64_t SpeculativeThresholdMicros();
  // Who takes part in a Paxos round at `serial`, how many must promise /
  // accept, and (given the statement's `commit` level) acknowledge the
  // commit; from one read of the placement. Unavailable when too few are alive.
  struct PaxosPlan {
    std::vector<PaxosParticipant> participants;
    int required = 0;
    int commit_block_for = 0;
  };
  Result<PaxosPlan> PlanPaxos(ConsistencyLevel serial, std::optional<ConsistencyLevel> commit);
  // Where a write goes: the natural replicas (the first `natural`
  // targets), then the pending ones, with what `level` needs of them;
  // Unavailable when too few are alive (not checked at ANY with hints).
  struct WritePlan {
    std::vector<Target> targets;
    size_t natural = 0;
    ConsistencyPlan plan;
  };
  Result<WritePlan> PlanWrite(ConsistencyLevel level, bool hints);
  // Sends `relative` (`writes` with table-relative keys) to every target
  // but `stored_by` (a counter's leader: already stored, counted as its
  // acknowledgement), hints those down or failing (when `hints`), without
  // waiting: `done` gets OK or WriteTimeout once the level is reached or
  // every target answered (each remote call ends by the write time-out).
  // It reads this tablet only before it returns: `done` and the replicas'
  // answers need only `services_` and values, the tablet may be gone.
  void ReplicateAsync(const WritePlan& w, const WriteSet& writes, std::shared_ptr<const WriteSet> relative,
                      std::shared_ptr<HintStore> hints, const RequestConsistency& consistency,
                      std::optional<size_t> stored_by, std::function<void(Status)> done);
  // The hint store for `writes`: none for range deletes (TRUNCATE).
  std::shared_ptr<HintStore> HintsFor(const WriteSet& writes) const;
  // A conditional statement's writes, proposed through its Paxos round.
  bool ThroughPaxos(const WriteSet& writes, const RequestConsistency& consistency) const;
  // A counter increment: its leader makes the shards, which then go to every
  // other replica.
  void ApplyCounterWriteAsync(const WriteSet& writes, const RequestConsistency& consistency,
                              std::function<void(Status)> done);
  // REQUIRES: consistency.paxos outlives `done`'s call (it is marked
  // preempted there when every participant refused the proposal).
  void ApplyThroughPaxosAsync(const WriteSet& writes, const RequestConsistency& consistency,
                              std::function<void(Status)> done);
  // A read's replicas: every target of the tablet and those a read at a
  // level asks first (ChooseReadTargets), with the level's plan.
  struct ReadReplicaSet {
    std::vector<Target> all;
    std::vector<const Target*> asked;  // into `all`
    ConsistencyPlan plan;
  };
  Result<std::unique_ptr<ReadReplicaSet>> PlanRead(ConsistencyLevel level);
  // Every replica a read at `level` may ask, after the Unavailable check:
  // this node first, then by ReplicaLatency; `plan` gets the level's needs.
  Result<std::vector<const Target*>> ChooseReadTargets(const std::vector<Target>& targets, ConsistencyLevel level,
                                                       ConsistencyPlan* plan);

  ReplicationServices* services_;
  std::shared_ptr<const TableSchema> table_;
  std::string start_, end_;
  SpeculativeRetry speculative_retry_;  // the table's option, parsed once per request
};

// Gives tablets of replicated keyspaces a ReplicatedTablet (for the node's
// Coordinator); system keyspaces (system_auth, system_traces, ...) stay on
// each node (nullptr). As the node's TabletPlacementView it tells its
// Database who holds each tablet and records or checks its splits and merges.
class ClusterReplicaResolver : public ReplicaResolver, public TabletPlacementView {
 public:
  explicit ClusterReplicaResolver(ReplicationServices* services) : services_(services) {}
  // A new coordinator for this one request (cheap: no I/O), from `table` as
  // the request reads it, so its options (speculative_retry) are current.
  std::shared_ptr<Replica> ReplicaFor(const std::shared_ptr<const TableSchema>& table, const Tablet& tablet) override;
  // From the cached placement only (no etcd request), as ReplicatedTablet::Hosts.
  std::vector<std::string> Hosts(const TableSchema& table, const Tablet& tablet) override;
  bool StoredHere(const TableSchema& table, const Tablet& tablet) override;
  // A split decided here (kThisNode) is recorded in the table's placement in
  // etcd (TabletPlacements::RecordSplit) before this node applies it; with a
  // leader term (the balancer leader's decision) only while the leader key
  // still has that create revision (BalancerLeaderFence; else Busy). One
  // applied from the placement (kPlacement: another node's, through
  // TabletMapSync) is allowed only at a boundary the cached placement has
  // (else NotFound), and nothing is written to etcd.
  Status BeforeSplit(const TableSchema& table, const Tablet& tablet, const std::string& split,
                     const TabletChangeSource& source) override;
  // Records the merge (TabletPlacements::RecordMerge, fenced as a split);
  // refused when the two tablets have different replica sets. kPlacement: allowed only at a
  // boundary the cached placement no longer has (else NotFound), nothing recorded.
  Status BeforeMerge(const TableSchema& table, const Tablet& left, const Tablet& right,
                     const TabletChangeSource& source) override;

 private:
  // `boundary` (a storage key) made table-relative, once the table's
  // placement exists (created if needed).
  Result<std::string> PlacedBoundary(const TableSchema& table, const Tablet& tablet, const std::string& boundary);
  // Whether the cached placement has a tablet starting at `relative`.
  bool PlacementStartsAt(const TableSchema& table, const std::string& relative);

  ReplicationServices* services_;
};

}  // namespace tessera::cluster
