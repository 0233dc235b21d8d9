// ReplicationChanger: what an ALTER KEYSPACE that changes replication does
// beyond the schema on a cluster, where tablets have their replicas listed
// (ScyllaDB's ALTER KEYSPACE of a tablets keyspace answers once the tablets
// have the new factor). The executor calls it; the cluster layer implements
// it (cluster/replication_change.h). A single node has none.
//
// Thread safety: implementations are thread-safe.
#pragma once

#include <string>

#include "common/status.h"

namespace tessera::cql {

class ReplicationChanger {
 public:
  virtual ~ReplicationChanger() = default;
  // Called once the ALTER KEYSPACE changing `keyspace`'s replication was
  // recorded as a cluster schema change; returns when every placed tablet of
  // its tables has the new factors (seconds to minutes: each added replica
  // streams its tablet). Errors: IOError when some tablets did not get them
  // (the message says how many and why; the schema change stays, and the
  // placement balancer completes it when it runs).
  virtual Status ApplyReplication(const std::string& keyspace) = 0;
};

}  // namespace tessera::cql
