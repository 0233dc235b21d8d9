#include "cluster/paxos_state.h"

#include <algorithm>

#include "cluster/paxos_ballot.h"
#include "cluster/replica_reads.h"
#include "cluster/write_set_codec.h"
#include "common/bytes.h"
#include "keys/murmur3.h"

namespace tessera::cluster {
namespace {

constexpr uint8_t kFormat = 1;
constexpr std::string_view kPrefix = "paxos/";

struct StoredState {
  std::string promised, accepted_ballot, accepted_update, committed_ballot, committed_update;
};

std::string Encode(const StoredState& s) {
  std::string out(1, static_cast<char>(kFormat));
  for (const std::string* f : {&s.promised, &s.accepted_ballot, &s.accepted_update, &s.committed_ballot,
                               &s.committed_update}) {
    PutVarint64(&out, f->size());
    out += *f;
  }
  return out;
}

Status Decode(std::string_view bytes, StoredState* s) {
  ByteReader r(bytes);
  uint8_t format = 0;
  if (!r.ReadByte(&format) || format != kFormat) return Status::Corruption("paxos state of an unknown format");
  for (std::string* f : {&s->promised, &s->accepted_ballot, &s->accepted_update, &s->committed_ballot,
                         &s->committed_update}) {
    if (!r.ReadLengthPrefixed(f)) return Status::Corruption("truncated paxos state");
  }
  return Status::OK();
}

// The row stored under `key`; an empty state when there is none.
Status Load(StorageEngine* engine, const std::string& key, StoredState* state) {
  std::string stored;
  Status found = engine->MetaGet(key, &stored);
  if (found.IsNotFound()) return Status::OK();
  TESSERA_RETURN_IF_ERROR(found);
  return Decode(stored, state);
}

}  // namespace

std::string EncodePaxosUpdate(const WriteSet& update) {
  std::string out;
  AppendWriteOps(update, &out);
  return out;
}

Status DecodePaxosUpdate(std::string_view bytes, WriteSet* update) {
  *update = WriteSet();
  return DecodeWriteOps(bytes, update);
}

std::mutex& PaxosStore::StripeOf(const std::string& key) {
  return stripes_[static_cast<uint64_t>(CassandraMurmur3(key).h1) % stripes_.size()];
}

Result<PaxosResponse> PaxosStore::Handle(uint32_t table_id, const PaxosRequest& request) {
  std::string key(kPrefix);
  key += request.table_uuid;
  key += request.partition;
  std::lock_guard<std::mutex> lock(StripeOf(key));
  StoredState state;
  TESSERA_RETURN_IF_ERROR(Load(engine_, key, &state));
  PaxosResponse response;
  switch (request.phase) {
    case PaxosRequest::Phase::kPrepare:
      response.ok = CompareBallots(request.ballot, state.promised) > 0;
      if (response.ok) state.promised = request.ballot;
      if (CompareBallots(state.accepted_ballot, state.committed_ballot) > 0) {
        response.accepted_ballot = state.accepted_ballot;
        TESSERA_RETURN_IF_ERROR(DecodePaxosUpdate(state.accepted_update, &response.accepted_update));
      }
      response.committed_ballot = state.committed_ballot;
      TESSERA_RETURN_IF_ERROR(DecodePaxosUpdate(state.committed_update, &response.committed_update));
      break;
    case PaxosRequest::Phase::kPropose:
      response.ok = CompareBallots(request.ballot, state.promised) >= 0;
      if (response.ok) {
        state.promised = request.ballot;
        state.accepted_ballot = request.ballot;
        state.accepted_update = EncodePaxosUpdate(request.update);
      }
      break;
    case PaxosRequest::Phase::kCommit:
      // The data first: a crash before the state is written leaves the
      // proposal accepted, and the next round commits it again (the
      // update's cells carry their timestamps, so twice changes nothing).
      TESSERA_RETURN_IF_ERROR(ApplyLocal(engine_, table_id, request.update));
      response.ok = true;
      if (CompareBallots(request.ballot, state.committed_ballot) > 0) {
        state.committed_ballot = request.ballot;
        state.committed_update = EncodePaxosUpdate(request.update);
      }
      if (CompareBallots(state.accepted_ballot, state.committed_ballot) <= 0) {
        state.accepted_ballot.clear();
        state.accepted_update.clear();
      }
      break;
  }
  response.promised = state.promised;
  if (request.phase == PaxosRequest::Phase::kPrepare && !response.ok) return response;
  if (request.phase == PaxosRequest::Phase::kPropose && !response.ok) return response;
  TESSERA_RETURN_IF_ERROR(engine_->MetaPutAsData(key, Encode(state)));
  return response;
}

Result<PaxosStateRows> PaxosStore::Export(const std::string& table_uuid, const std::string& lower,
                                          const std::string& upper) {
  std::string prefix(kPrefix);
  prefix += table_uuid;
  TESSERA_ASSIGN_OR_RETURN(auto stored, engine_->MetaScan(prefix));
  PaxosStateRows rows;
  for (auto& [key, value] : stored) {
    std::string partition = key.substr(prefix.size());
    if (partition < lower || (!upper.empty() && partition >= upper)) continue;
    rows.emplace_back(std::move(partition), std::move(value));
  }
  return rows;
}

Result<std::vector<WriteSet>> PaxosStore::UpdatesOfRow(std::string_view row) {
  StoredState state;
  Status decoded = Decode(row, &state);
  if (!decoded.ok()) return Status::InvalidArgument(decoded.message());
  std::vector<WriteSet> updates(2);
  if (!DecodePaxosUpdate(state.accepted_update, &updates[0]).ok() ||
      !DecodePaxosUpdate(state.committed_update, &updates[1]).ok()) {
    return Status::InvalidArgument("paxos state with an update that does not decode");
  }
  return updates;
}

Status PaxosStore::Import(const std::string& table_uuid, const PaxosStateRows& rows) {
  for (const auto& [partition, bytes] : rows) {
    StoredState theirs;
    Status decoded = Decode(bytes, &theirs);
    if (!decoded.ok()) return Status::InvalidArgument(decoded.message());
    std::string key(kPrefix);
    key += table_uuid;
    key += partition;
    std::lock_guard<std::mutex> lock(StripeOf(key));
    StoredState ours;
    TESSERA_RETURN_IF_ERROR(Load(engine_, key, &ours));
    if (CompareBallots(theirs.promised, ours.promised) > 0) ours.promised = theirs.promised;
    if (CompareBallots(theirs.accepted_ballot, ours.accepted_ballot) > 0) {
      ours.accepted_ballot = theirs.accepted_ballot;
      ours.accepted_update = theirs.accepted_update;
    }
    if (CompareBallots(theirs.committed_ballot, ours.committed_ballot) > 0) {
      ours.committed_ballot = theirs.committed_ballot;
      ours.committed_update = theirs.committed_update;
    }
    if (CompareBallots(ours.accepted_ballot, ours.committed_ballot) <= 0) {
      ours.accepted_ballot.clear();
      ours.accepted_update.clear();
    }
    TESSERA_RETURN_IF_ERROR(engine_->MetaPutAsData(key, Encode(ours)));
  }
  return Status::OK();
}

Result<std::vector<PaxosStore::Row>> PaxosStore::Rows() {
  TESSERA_ASSIGN_OR_RETURN(auto stored, engine_->MetaScan(kPrefix));
  std::vector<Row> rows;
  for (const auto& [key, value] : stored) {
    if (key.size() < kPrefix.size() + 16) continue;
    StoredState s;
    if (!Decode(value, &s).ok()) continue;
    Row r;
    r.table_uuid = key.substr(kPrefix.size(), 16);
    r.partition = key.substr(kPrefix.size() + 16);
    r.promised = std::move(s.promised);
    r.accepted_ballot = std::move(s.accepted_ballot);
    r.accepted_update = std::move(s.accepted_update);
    r.committed_ballot = std::move(s.committed_ballot);
    r.committed_update = std::move(s.committed_update);
    rows.push_back(std::move(r));
  }
  return rows;
}

Result<size_t> PaxosStore::Prune(const std::function<std::optional<int32_t>(const std::string& table_uuid)>& gc_grace_of,
                                 int64_t now_micros) {
  constexpr int64_t kMinimumMicros = int64_t{3} * 3600 * 1'000'000;  // Cassandra 4.0's floor on the TTL
  TESSERA_ASSIGN_OR_RETURN(auto stored, engine_->MetaScan(kPrefix));
  size_t pruned = 0;
  for (const auto& [key, value] : stored) {
    if (key.size() < kPrefix.size() + 16) continue;
    const std::optional<int32_t> gc_grace = gc_grace_of(key.substr(kPrefix.size(), 16));
    std::lock_guard<std::mutex> lock(StripeOf(key));
    if (gc_grace) {
      // Read again under the lock: a round may have moved it on since the scan.
      std::string current;
      Status found = engine_->MetaGet(key, &current);
      if (found.IsNotFound()) continue;
      TESSERA_RETURN_IF_ERROR(found);
      StoredState s;
      if (!Decode(current, &s).ok()) continue;  // left for a human to look at
      if (CompareBallots(s.accepted_ballot, s.committed_ballot) > 0) continue;  // in progress
      int64_t latest = 0;
      for (const std::string* b : {&s.promised, &s.accepted_ballot, &s.committed_ballot}) {
        latest = std::max(latest, BallotMicros(*b));
      }
      const int64_t keep = std::max(kMinimumMicros, int64_t{*gc_grace} * 1'000'000);
      if (now_micros - latest < keep) continue;
    }
    TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(key));
    ++pruned;
  }
  return pruned;
}

}  // namespace tessera::cluster
