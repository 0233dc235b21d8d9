// CREATE INDEX and DROP INDEX (Cassandra 4.1 CQL §secondary indexes), bound
// to the catalog and run against the Database (db/secondary_index.h builds
// them as ScyllaDB's global indexes). Both report the base table UPDATED, as
// Cassandra does.
//
// Messages are Cassandra 4.1's: "Index 'x' already exists", "Index x is a
// duplicate of existing index y", "Index 'x' could not be found in any of
// the tables of keyspace 'k'", the target checks of db/secondary_index.h;
// custom index classes (USING '...') are refused.
//
// Thread safety: as the Database.
#pragma once

#include <string>

#include "common/status.h"
#include "coordinator/coordinator.h"
#include "cql/executor/schema_statements.h"

namespace tessera::cql {

// `build`: write the entries of existing rows in the background (false when
// a cluster node replays another node's statement: that node builds).
Result<SchemaOutcome> ExecuteCreateIndex(Coordinator& coordinator, const CreateIndexStatement& stmt,
                                         const std::string& keyspace, bool build);
Result<SchemaOutcome> ExecuteDropIndex(Coordinator& coordinator, const DropStatement& stmt, const std::string& keyspace);

// Cassandra's default index name: <table>_<column>_idx with characters other
// than letters, digits and _ removed, then _1, _2, ... while it is taken.
std::string DefaultIndexName(const Database& db, const std::string& keyspace, const std::string& table,
                             const std::string& column);

}  // namespace tessera::cql
