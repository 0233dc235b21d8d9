#include "cluster/paxos_state.h"

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
  std::string stored;
  Status found = engine_->MetaGet(key, &stored);
  if (found.ok()) {
    TESSERA_RETURN_IF_ERROR(Decode(stored, &state));
  } else if (!found.IsNotFound()) {
    return found;
  }
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

}  // namespace tessera::cluster
