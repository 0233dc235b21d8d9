// NodeRecord: what a node publishes about itself in etcd, and the etcd key
// layout of cluster membership.
//
// Key layout (frozen: nodes of different releases read it):
//   /tessera/nodes/<host_id>  a NodeRecord as JSON; written when the node
//                             joins, kept while it is a member, whether
//                             alive or not (Cassandra's ring membership)
//   /tessera/alive/<host_id>  empty, bound to the node's lease: present
//                             while the node runs (Cassandra's gossip
//                             liveness); etcd deletes it when the lease
//                             expires, so a node killed with -9 goes DOWN
//                             after at most the lease's TTL
// <host_id> is the uuid's canonical text ("8-4-4-4-12" lowercase hex).
//
// JSON fields (frozen): host_id (uuid text), address (IPv4/IPv6 text: the
// node's broadcast and rpc address), cql_port, data_center, rack,
// release_version, token (decimal int64 text: the one token reported to
// drivers; tablets, not tokens, place data), internode_port (the gRPC port
// of internode requests on `address`; 0 or absent: none).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/uuid.h"  // UuidText, UuidFromText: the host id's text form

namespace tessera::cluster {

inline constexpr char kNodesPrefix[] = "/tessera/nodes/";
inline constexpr char kAlivePrefix[] = "/tessera/alive/";
inline constexpr char kClusterPrefix[] = "/tessera/";

struct NodeRecord {
  std::string host_id;  // 16 bytes
  std::string address;  // the node's address as text, e.g. "127.0.0.2"
  int32_t cql_port = 9042;
  std::string data_center = "datacenter1";
  std::string rack = "rack1";
  std::string release_version = "4.0.11";
  int64_t token = 0;
  int32_t internode_port = 0;
};

std::string EncodeNodeRecord(const NodeRecord& record);
// Corruption for JSON that is not a node record.
Result<NodeRecord> DecodeNodeRecord(const std::string& text);

// The token a node reports: Murmur3 of its host id, so that every node has
// its own and keeps it across restarts.
int64_t TokenOfHostId(const std::string& host_id);

}  // namespace tessera::cluster
