// InternodeTransport: how a node's coordinator reaches the replicas of other
// nodes (issue 28 item 7). Every call is asynchronous: it returns at once
// and runs `done` exactly once, on a thread of the transport, with the
// outcome. Implementations: InternodeClient (gRPC, cluster/internode_client.h)
// between processes, and InMemoryNetwork's transports
// (cluster/in_memory_network.h), between the nodes of one process in tests,
// with delay, loss and partitions injected.
//
// Outcomes, the same for every implementation: OK and the answer; Busy
// ("timed out") once `timeout_micros` passed without an answer (a lost
// request or reply ends this way); IOError when the target cannot be reached
// at all (nothing listens there); NotFound when the replica does not know
// the table; other errors as the replica's ReplicaService returned them.
//
// target: "address:port" of a node's internode endpoint (its node record's
// address and internode_port). Keys are table-relative
// (cluster/replica_reads.h).
//
// Thread safety: thread-safe; `done` callbacks may run concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/paxos_state.h"
#include "cluster/replica_reads.h"
#include "common/status.h"
#include "storage/storage_engine.h"
#include "tracing/trace_session.h"

namespace tessera::cluster {

// The address of a target: "address:port" without its port.
inline std::string EndpointAddress(const std::string& target) { return target.substr(0, target.rfind(':')); }

class InternodeTransport {
 public:
  virtual ~InternodeTransport() = default;

  // `trace` (a traced request's session, else null): the replica's steps
  // are added to it when its answer arrives (TraceSession::AddSteps, with
  // the target's address as their source); the same for ReadKeys.
  virtual void Apply(const std::string& target, const std::string& table_uuid, const WriteSet& relative_writes,
                     int64_t timeout_micros, const std::shared_ptr<tracing::TraceSession>& trace,
                     std::function<void(Status)> done) = 0;
  virtual void ReadRange(const std::string& target, const RangeQuery& query, int64_t timeout_micros,
                         const std::shared_ptr<tracing::TraceSession>& trace,
                         std::function<void(Result<RangeBatch>)> done) = 0;
  // `digest`: each found value comes back as its ValueDigest (replica_reads.h).
  // `internal`: not counted as a request the target served (RangeQuery::internal).
  virtual void ReadKeys(const std::string& target, const std::string& table_uuid,
                        const std::vector<std::string>& relative_keys, bool digest, bool internal,
                        int64_t timeout_micros,
                        const std::shared_ptr<tracing::TraceSession>& trace,
                        std::function<void(Result<std::vector<std::optional<std::string>>>)> done) = 0;
  virtual void Digest(const std::string& target, const std::string& table_uuid, const std::string& lower,
                      const std::string& upper, int64_t timeout_micros,
                      std::function<void(Result<RangeDigest>)> done) = 0;
  // One phase of a Paxos round (cluster/paxos_state.h) on the target's replica.
  virtual void Paxos(const std::string& target, const PaxosRequest& request, int64_t timeout_micros,
                     std::function<void(Result<PaxosResponse>)> done) = 0;
  // Counter increments to the replica that leads them; the answer is the
  // counter shards it stored (ReplicaService::LeadCounterWrite).
  virtual void LeadCounterWrite(const std::string& target, const std::string& table_uuid,
                                const WriteSet& relative_writes, int64_t timeout_micros,
                                std::function<void(Result<WriteSet>)> done) = 0;
  // The target's Paxos state of a range, and a merge of such rows into the
  // target's (ReplicaService::ExportPaxosState / ImportPaxosState).
  virtual void ExportPaxosState(const std::string& target, const std::string& table_uuid, const std::string& lower,
                                const std::string& upper, int64_t timeout_micros,
                                std::function<void(Result<PaxosStateRows>)> done) = 0;
  virtual void ImportPaxosState(const std::string& target, const std::string& table_uuid, const PaxosStateRows& rows,
                                int64_t timeout_micros, std::function<void(Status)> done) = 0;
  // A finished trace session for the target to hold (TraceStore::Add), so
  // that its system_traces lists it too. Not counted as a request.
  virtual void StoreTrace(const std::string& target, const tracing::TraceSessionRecord& session,
                          int64_t timeout_micros, std::function<void(Status)> done) = 0;
  // The target's ANN candidates (ReplicaService::VectorSearch): table-relative
  // storage keys, nearest first.
  virtual void VectorSearch(const std::string& target, const VectorSearchQuery& query, int64_t timeout_micros,
                            std::function<void(Result<std::vector<std::string>>)> done) = 0;
  // A heartbeat (the failure detector's): OK when the node answered. Not
  // counted as a request.
  virtual void Ping(const std::string& target, const std::string& from_host_id, int64_t timeout_micros,
                    std::function<void(Status)> done) = 0;

  // Requests sent and bytes of their payloads, since start (for /metrics).
  virtual uint64_t requests_sent() const = 0;
  virtual uint64_t bytes_sent() const = 0;
  // Messages that carried them (a batch of several requests counts once).
  virtual uint64_t messages_sent() const = 0;
};

}  // namespace tessera::cluster
