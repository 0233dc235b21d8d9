// InternodeClient: the gRPC InternodeTransport (cluster/internode_transport.h:
// the calls and their outcomes), this node's side of internode requests (the
// service in cluster/proto/internode.proto) to other nodes' replicas; `done`
// runs on a gRPC thread. One channel per target address is kept
// for the client's lifetime (gRPC reconnects it as needed).
//
// Coalescing (issue 28: requests bound for one node travel in one message):
// Apply and ReadKeys to a node go out at once while fewer than 2 calls to it
// are in flight; beyond that they wait, and when a call ends everything that
// waited (up to 256) goes in one Batch message, with the earliest deadline
// among them. A request whose deadline passed while it waited ends with Busy
// without being sent. Each answers as its own call would.
//
// gRPC types stay in internode_client.cc (this header is included by the
// replicated tablet and the node).
//
// Thread safety: thread-safe; `done` callbacks may run concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/internode_tls.h"
#include "cluster/internode_transport.h"
#include "cluster/replica_reads.h"
#include "common/status.h"
#include "storage/storage_engine.h"

namespace tessera::cluster {

class InternodeClient final : public InternodeTransport {
 public:
  // tls: nullptr for plaintext; else every channel speaks TLS, verifies the
  // peer's certificate against tls->ca and its address, and presents this
  // node's certificate.
  explicit InternodeClient(const InternodeTlsMaterial* tls = nullptr);
  // Waits until every call in flight has ended (each has a deadline), so that
  // no callback outlives the client.
  ~InternodeClient();
  InternodeClient(const InternodeClient&) = delete;
  InternodeClient& operator=(const InternodeClient&) = delete;

  // target: "address:port" of a node's internode listener.
  void Apply(const std::string& target, const std::string& table_uuid, const WriteSet& relative_writes,
             int64_t timeout_micros, const std::shared_ptr<tracing::TraceSession>& trace,
             std::function<void(Status)> done) override;
  void ReadRange(const std::string& target, const RangeQuery& query, int64_t timeout_micros,
                 const std::shared_ptr<tracing::TraceSession>& trace,
                 std::function<void(Result<RangeBatch>)> done) override;
  void ReadKeys(const std::string& target, const std::string& table_uuid, const std::vector<std::string>& relative_keys,
                bool digest, bool internal, int64_t timeout_micros, const std::shared_ptr<tracing::TraceSession>& trace,
                std::function<void(Result<std::vector<std::optional<std::string>>>)> done) override;
  void Digest(const std::string& target, const std::string& table_uuid, const std::string& lower,
              const std::string& upper, int64_t timeout_micros, std::function<void(Result<RangeDigest>)> done) override;
  void VectorSearch(const std::string& target, const VectorSearchQuery& query, int64_t timeout_micros,
                    std::function<void(Result<std::vector<std::string>>)> done) override;
  // Not queued behind the node's other calls.
  void Paxos(const std::string& target, const PaxosRequest& request, int64_t timeout_micros,
             std::function<void(Result<PaxosResponse>)> done) override;
  void LeadCounterWrite(const std::string& target, const std::string& table_uuid, const WriteSet& relative_writes,
                        int64_t timeout_micros, std::function<void(Result<WriteSet>)> done) override;
  void ExportPaxosState(const std::string& target, const std::string& table_uuid, const std::string& lower,
                        const std::string& upper, int64_t timeout_micros,
                        std::function<void(Result<PaxosStateRows>)> done) override;
  void ImportPaxosState(const std::string& target, const std::string& table_uuid, const PaxosStateRows& rows,
                        int64_t timeout_micros, std::function<void(Status)> done) override;
  void StoreTrace(const std::string& target, const tracing::TraceSessionRecord& session, int64_t timeout_micros,
                  std::function<void(Status)> done) override;
  void Ping(const std::string& target, const std::string& from_host_id, int64_t timeout_micros,
            std::function<void(Status)> done) override;

  uint64_t requests_sent() const override;
  uint64_t bytes_sent() const override;
  // gRPC calls made: a Batch of several requests counts once.
  uint64_t messages_sent() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::cluster
