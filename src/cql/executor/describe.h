// DESCRIBE as a server-side statement (Cassandra 4.0, CASSANDRA-14825):
// rows of (keyspace_name, type, name) for the listing forms (KEYSPACES,
// TABLES, TYPES) and (keyspace_name, type, name, create_statement) for the
// others, each create_statement a CQL statement that recreates the element:
//   SCHEMA            every user keyspace (FULL: the system ones too) with its
//                     types, functions, aggregates, tables and indexes, in an
//                     order that can be replayed
//   KEYSPACE [ks]     the keyspace (the current one when none is named), then its
//                     types, functions, aggregates, tables and indexes (ONLY:
//                     the keyspace alone)
//   TABLE [ks.]t      the table and its indexes
//   TYPE / INDEX      the one element
//   FUNCTIONS, AGGREGATES
//                     the listing forms of user-defined functions and aggregates
//   FUNCTION / AGGREGATE [ks.]f
//                     every overload of it (a function's body between $$)
//   [ks.]name         whichever of keyspace, table, type or index the name is
// Tessera's table options (distribution, initial_tablets, buckets,
// partition_buckets) are written into the CREATE TABLE, so a replay makes the
// same layout. The internal tables of secondary indexes are never listed.
//
// Errors: InvalidArgument in Cassandra's words ("'x' not found in keyspaces",
// "'t' not found in keyspace 'ks'", "No keyspace specified and no current
// keyspace").
//
// Thread safety: reads the catalog's snapshots.
#pragma once

#include <string>

#include "common/status.h"
#include "cql/executor/result_set.h"
#include "cql/parser/raw_statements.h"
#include "db/database.h"

namespace tessera::cql {

Result<ResultSet> ExecuteDescribe(const Database& db, const DescribeStatement& stmt, const std::string& keyspace);

// The CREATE statements alone (also used by tests and tools).
std::string CreateKeyspaceCql(const KeyspaceMetadata& ks);
std::string CreateTypeCql(const CqlType& type);
std::string CreateTableCql(const TableSchema& table);
std::string CreateIndexCql(const TableSchema& table, const IndexDef& index);
// The WITH clause of a table or view: CLUSTERING ORDER BY, then its options.
std::string TableOptionsCql(const TableSchema& table);
// CREATE MATERIALIZED VIEW as cqlsh's DESCRIBE writes it. REQUIRES: view.is_view().
std::string CreateViewCql(const TableSchema& view);
std::string CreateFunctionCql(const UserFunction& f);
std::string CreateAggregateCql(const UserAggregate& a);

}  // namespace tessera::cql
