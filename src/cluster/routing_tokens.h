// Routing tokens: the tokens a node reports to drivers in system.local and
// system.peers, chosen so that the drivers' token-aware policies (DataStax
// Python and Node.js drivers by default, gocql's TokenAwareHostPolicy) send a
// request to a node holding its partition.
//
// Drivers know one Murmur3 ring per cluster (Cassandra's vnodes): a node
// owns the token range (previous token, its token], and a key's replicas are
// the owner followed by the next distinct nodes on the ring. Tessera places
// tablets per table, so one ring can follow only one table's placement: the
// reference table, the hash-distributed table of a non-system keyspace
// whose placement has the most tablets (ties: the smallest table uuid),
// usually the largest one. Each of its tablets contributes its last token,
// owned by its first replica. Other tables route by the same ring; where
// their placement differs the coordinator forwards the request
// (tessera_coordinator_forwarded_requests_total counts it). ScyllaDB's
// per-table answer (the "tablets-routing-v1" extension) needs its own
// drivers; Cassandra's drivers read tokens only when they connect and on
// topology changes, so the ring serves applications that connect after
// their tables exist.
//
// A node that owns no tablet of the reference table reports an empty range
// (INT64_MIN plus its index among such nodes: INT64_MIN is never a key's
// token), since drivers expect every node to have a token. With no
// reference table, every node reports its fixed token (TokenOfHostId).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cluster/tablet_placement.h"

namespace tessera::cluster {

// Host id (16 bytes) -> the tokens it reports, ascending. Every host of
// `members` gets at least one; tablets whose first replica is not a member
// are left to the owner of the next token. `placement`: table-relative
// bounds of a hash table (an 8-byte encoded token, then partition-key
// components; keys/storage_key.h).
std::map<std::string, std::vector<int64_t>> RingOfPlacement(const std::vector<TabletReplicas>& placement,
                                                            const std::vector<std::string>& members);

// The last token of a hash-table tablet ending at table-relative `end`
// (empty: the table's end, INT64_MAX). An end inside the partitions of one
// token keeps that token in this tablet.
int64_t LastTokenBefore(const std::string& end);

}  // namespace tessera::cluster
