// A replica's side of Paxos (issue 30): per partition, the ballot it
// promised, the proposal it accepted and the last one it committed, as
// Cassandra's system.paxos row of a partition (Cassandra 4.1's
// PaxosState: prepare/promise, propose/accept, commit). Coordinators drive
// the rounds (cluster/paxos_coordinator.h); transports deliver the phases
// (internode.proto's Paxos rpc, in_memory_network).
//
//  - Prepare(b): promises b when b is later than every ballot promised
//    before; answers the accepted proposal not yet committed and the last
//    commit either way (the coordinator finishes or repairs them).
//  - Propose(b, update): accepts when no later ballot was promised.
//  - Commit(b, update): applies the update to the partition's data and keeps
//    it as the last commit when b is later than the last one.
// A refusal names the promised ballot that beat the request, so the
// coordinator's next ballot is later.
//
// Stored in the meta column family under "paxos/" + table uuid + partition
// (FROZEN ON DISK: format byte 1, then length-prefixed promised ballot,
// accepted ballot, accepted update, committed ballot, committed update; an
// update's bytes are cluster/write_set_codec.h's), written as durably as data
// (StorageEngine::MetaPutAsData).
//
// Pruning (Prune): a row goes once its table is dropped, or once nothing is
// in progress in it (no accepted proposal later than the last commit) and
// its latest ballot is older than max(3 hours, the table's
// gc_grace_seconds): Cassandra 4.0 writes system.paxos with that TTL. By
// then every round that could still need the promise has timed out, and
// the last commit has reached every replica through hints and repair, as a
// tombstone is assumed to have within gc_grace.
//
// A tablet migration carries the rows of its range to the new replica
// (Export on each old replica, Import on the new one; cluster/tablet_migration.h),
// so that no accepted proposal is lost with a replica that leaves. Import
// merges: the later promise, the later accepted proposal and the later
// commit of the two rows, an accepted proposal not later than the commit
// dropped, as the phases above would have left them.
//
// Keys (partition, updates) are table-relative (cluster/replica_reads.h).
// Errors: those of the storage engine; Corruption for a row that does not decode.
// Thread safety: thread-safe; the phases of one partition run one at a time.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "storage/storage_engine.h"

namespace tessera::cluster {

struct PaxosRequest {
  enum class Phase : uint8_t { kPrepare = 0, kPropose = 1, kCommit = 2 };  // FROZEN ON THE WIRE
  Phase phase = Phase::kPrepare;
  std::string table_uuid;  // 16 bytes
  std::string partition;   // the partition's position, table-relative
  std::string ballot;      // 16 bytes (cluster/paxos_ballot.h)
  WriteSet update;         // propose and commit: the partition's writes, table-relative
};

struct PaxosResponse {
  bool ok = false;        // promised, accepted or committed
  std::string promised;   // the replica's promise now (on a refusal: the ballot that won)
  // Prepare only: the proposal accepted and not yet committed (empty ballot:
  // none), and the last commit (empty ballot: none).
  std::string accepted_ballot;
  WriteSet accepted_update;
  std::string committed_ballot;
  WriteSet committed_update;
};

// Stored Paxos rows of partitions: (partition position, row bytes).
using PaxosStateRows = std::vector<std::pair<std::string, std::string>>;

class PaxosStore {
 public:
  // REQUIRES: engine outlives the store.
  explicit PaxosStore(StorageEngine* engine) : engine_(engine) {}
  // Runs one phase on the partition of table `table_id` (this node's id of
  // request.table_uuid).
  Result<PaxosResponse> Handle(uint32_t table_id, const PaxosRequest& request);
  // The stored rows of the table's partitions whose position lies in
  // [lower, upper) (upper empty: to the table's end), as (partition, row bytes).
  Result<PaxosStateRows> Export(const std::string& table_uuid, const std::string& lower, const std::string& upper);
  // Merges rows as Export gave them into this replica's (see above), one
  // row at a time. Errors: InvalidArgument for a row that does not decode
  // (the rows before it stay merged, it and those after it are not; check
  // them first with UpdatesOfRow).
  [[nodiscard]] Status Import(const std::string& table_uuid, const PaxosStateRows& rows);
  // The accepted and the committed update of a row as Export gives it
  // (empty when there is none), so that a replica can check what another
  // node sends before it imports any of it. Errors: InvalidArgument for a
  // row, or an update in it, that does not decode.
  static Result<std::vector<WriteSet>> UpdatesOfRow(std::string_view row);
  // Removes the rows pruning allows (see above), given each table's
  // gc_grace_seconds by uuid (nullopt: the table is gone) and the time now
  // (microseconds since the epoch). Returns how many went.
  Result<size_t> Prune(const std::function<std::optional<int32_t>(const std::string& table_uuid)>& gc_grace_of,
                       int64_t now_micros);
  // Every row, decoded: what system.paxos shows.
  struct Row {
    std::string table_uuid, partition;
    std::string promised, accepted_ballot, accepted_update, committed_ballot, committed_update;
  };
  Result<std::vector<Row>> Rows();

 private:
  std::mutex& StripeOf(const std::string& key);
  StorageEngine* engine_;
  std::array<std::mutex, 64> stripes_;
};

// The update's bytes (the format above), for storage and tests.
std::string EncodePaxosUpdate(const WriteSet& update);
Status DecodePaxosUpdate(std::string_view bytes, WriteSet* update);

}  // namespace tessera::cluster
