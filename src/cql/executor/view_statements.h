// CREATE and DROP MATERIALIZED VIEW (Cassandra 4.1 CQL §materialized views;
// ScyllaDB's), bound to the catalog and run against the Database
// (db/materialized_view.h keeps the view rows). Both report the view as a
// TABLE change, as Cassandra's schema events do.
//
// Messages are Cassandra 4.1's CreateViewStatement's: "Materialized views are
// not supported on counter tables", "Cannot include static column 'c' in
// materialized view 'v'", "Cannot create materialized view 'v' without
// primary key columns k from base table 't'", "Cannot include more than one
// non-primary key column in materialized view primary key (got a, b)",
// "Primary key columns a must be restricted with 'IS NOT NULL' or otherwise",
// and the rest. ALTER MATERIALIZED VIEW goes through ExecuteAlterTable.
//
// Thread safety: as the Database.
#pragma once

#include <string>

#include "common/status.h"
#include "coordinator/coordinator.h"
#include "cql/executor/schema_statements.h"

namespace tessera::cql {

// Cassandra's client warning on CREATE MATERIALIZED VIEW.
inline constexpr const char* kViewUsageWarning =
    "Materialized views are experimental and are not recommended for production use.";

// `build`: write the view rows of existing base rows in the background
// (false when a cluster node replays another node's statement: that node
// builds).
Result<SchemaOutcome> ExecuteCreateView(Coordinator& coordinator, const CreateViewStatement& stmt,
                                        const std::string& keyspace, bool build);
Result<SchemaOutcome> ExecuteDropView(Coordinator& coordinator, const DropStatement& stmt, const std::string& keyspace);

}  // namespace tessera::cql
