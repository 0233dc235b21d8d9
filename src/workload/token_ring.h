// TokenRing: the Murmur3 token ring a token-aware driver builds from
// system.local and system.peers (their `tokens`, set<text> of decimal
// int64, and the node's address), so that the workload generator routes each
// request to the node owning its partition's token, as the DataStax drivers'
// TokenAwarePolicy does (its first replica; the cluster reports tokens that
// follow the tablet placement, cluster/routing_tokens.h).
//
// A node owns the range (previous token, its token]; the smallest token
// wraps around and owns everything above the greatest. With replication
// factor N a request may go to any of the N replicas; the runner keeps it on
// its worker's own node when that is one, else takes the replica with the
// fewest requests in flight (as the Node.js driver does).
//
// Errors (Read): IOError from the connection, the server's error as
// CqlConnection::Query returns it, Corruption for malformed rows.
// Thread safety: const methods are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "client/cql_connection.h"
#include "common/status.h"

namespace tessera::workload {

class TokenRing {
 public:
  // Reads the ring through `conn`, a connection to the node at
  // `connected_address` (system.local does not name the address a client used).
  static Result<TokenRing> Read(client::CqlConnection& conn, const std::string& connected_address);

  bool empty() const { return owners_.empty(); }
  // The address (text, e.g. "127.0.0.2") of the node owning `token`.
  // REQUIRES: !empty().
  const std::string& Owner(int64_t token) const;
  // The `count` replicas of `token` under SimpleStrategy, as drivers compute
  // them: the owner, then the next distinct nodes walking the ring up
  // (fewer when the ring has fewer nodes). REQUIRES: !empty().
  std::vector<std::string> Replicas(int64_t token, int count) const;

 private:
  std::map<int64_t, std::string> owners_;  // token -> address
};

}  // namespace tessera::workload
