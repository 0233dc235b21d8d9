// ClusterView: what the system tables need to know about the other nodes
// of a cluster, the tokens every node reports (cluster/routing_tokens.h),
// and this node's Paxos state (system.paxos).
// The executor reads it; the cluster layer implements it (the
// executor never depends on the cluster layer). A single node has none.
//
// Thread safety: implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::cql {

struct PeerInfo {
  std::string host_id;  // 16 bytes
  std::string address;  // text, e.g. "127.0.0.2": peer, rpc_address and native_address
  int32_t cql_port = 9042;
  std::string data_center, rack, release_version;
  std::string schema_version;  // 16 bytes; empty when unknown
  std::vector<int64_t> tokens;  // ascending; what token-aware drivers route by
  bool alive = false;
};

// One partition's Paxos state on this node (cluster/paxos_state.h), as
// system.paxos shows it. Ballots are timeuuids (16 bytes, empty: none);
// updates are the encoded writes (cluster/write_set_codec.h).
struct PaxosRowInfo {
  std::string table_uuid;  // 16 bytes
  std::string partition;   // the partition's position, table-relative
  std::string promised, accepted_ballot, accepted_update, committed_ballot, committed_update;
};

class ClusterView {
 public:
  virtual ~ClusterView() = default;
  // Every member but this node, alive or not (Cassandra's system.peers
  // lists down nodes too).
  virtual std::vector<PeerInfo> Peers() const = 0;
  // The tokens this node reports in system.local (ascending, at least one).
  virtual std::vector<int64_t> LocalTokens() const = 0;
  // This node's Paxos state, every partition that has one (system.paxos).
  virtual std::vector<PaxosRowInfo> PaxosRows() const { return {}; }
};

}  // namespace tessera::cql
