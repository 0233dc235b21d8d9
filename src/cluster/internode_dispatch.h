// InternodeDispatch: the requests of the internode protocol
// (cluster/proto/internode.proto, FROZEN ON THE WIRE) served on this node's
// ReplicaService: each decoded request turned into plain values, run, and
// its answer written into the reply message. The gRPC listener
// (cluster/internode_service.cc) runs one per call; the internode fuzzer
// (fuzz/internode_fuzzer.cc) runs it on whatever bytes a peer could send, with
// no network in between. Only those two include this header, so the
// generated protobuf code stays out of every other file.
//
// Errors (a call's status): NotFound (a table this node does not know),
// InvalidArgument (a request no coordinator makes: an unknown Paxos phase, a
// point key inside the range it came with, a key outside the table), and
// those of the storage engine.
// Thread safety: thread-safe (ReplicaService is).
#pragma once

#include <string>

#include "cluster/internode_trace.h"
#include "common/status.h"
#include "internode.pb.h"

namespace tessera::cluster {

class ReplicaService;

// The gRPC status code (grpc::StatusCode) that carries `s` to the peer, in a
// call's status and in a batch item's CallStatus.code (FROZEN ON THE WIRE):
// OK 0, INVALID_ARGUMENT 3, NOT_FOUND 5, any other error INTERNAL 13.
int WireStatusCode(const Status& s);
// The message that goes with it: the status's own message for
// INVALID_ARGUMENT and NOT_FOUND, its whole text (with the code's name) for
// INTERNAL, whose code says less; empty for OK.
std::string WireStatusMessage(const Status& s);

class InternodeDispatch {
 public:
  // REQUIRES: replica outlives this object.
  explicit InternodeDispatch(ReplicaService* replica) : replica_(replica) {}

  // `steps`: where a traced apply's steps go (null: nowhere).
  [[nodiscard]] Status Apply(const tessera::internode::ApplyRequest& request, TraceStepsProto* steps);
  [[nodiscard]] Status ReadRange(const tessera::internode::ReadRangeRequest& request,
                                 tessera::internode::ReadRangeReply* reply);
  [[nodiscard]] Status ReadKeys(const tessera::internode::ReadKeysRequest& request,
                                tessera::internode::ReadKeysReply* reply);
  [[nodiscard]] Status Digest(const tessera::internode::DigestRequest& request,
                              tessera::internode::DigestReply* reply);
  [[nodiscard]] Status VectorSearch(const tessera::internode::VectorSearchRequest& request,
                                    tessera::internode::VectorSearchReply* reply);
  [[nodiscard]] Status Paxos(const tessera::internode::PaxosRequest& request,
                             tessera::internode::PaxosReply* reply);
  [[nodiscard]] Status LeadCounterWrite(const tessera::internode::CounterWriteRequest& request,
                                        tessera::internode::CounterWriteReply* reply);
  [[nodiscard]] Status ExportPaxosState(const tessera::internode::PaxosStateRequest& request,
                                        tessera::internode::PaxosStateRows* reply);
  [[nodiscard]] Status ImportPaxosState(const tessera::internode::PaxosStateRows& request);
  void StoreTrace(const tessera::internode::TraceSession& request);
  // Each request of the batch answers in its own status, as its own call
  // would; the batch as a whole always succeeds.
  void Batch(const tessera::internode::BatchRequest& request, tessera::internode::BatchReply* reply);

 private:
  ReplicaService* const replica_;
};

}  // namespace tessera::cluster
