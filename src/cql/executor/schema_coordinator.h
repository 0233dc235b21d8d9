// SchemaCoordinator: makes a schema statement (CREATE / ALTER / DROP of
// keyspaces and tables) a change of the whole cluster. The executor calls
// it; the cluster layer implements it over etcd (cluster/schema_log.h). A
// single node has none and runs DDL directly.
//
// Thread safety: implementations are thread-safe.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "cql/executor/schema_statements.h"

namespace tessera::cql {

class SchemaCoordinator {
 public:
  virtual ~SchemaCoordinator() = default;
  // Runs `execute` (the statement's execution on this node) as the cluster's
  // next schema change: under the cluster's schema lock, after this node has
  // applied every earlier change; when it reports a change, records
  // (keyspace, statement) for every other node before the lock is released.
  // `keyspace` is the session's keyspace the statement ran in (may be empty).
  // Errors: those of `execute`; Busy when the lock is not had within 10 s;
  // IOError when the metadata store cannot be reached (nothing ran then).
  virtual Result<SchemaOutcome> Run(const std::string& keyspace, const std::string& statement,
                                    const std::function<Result<SchemaOutcome>()>& execute) = 0;
};

}  // namespace tessera::cql
