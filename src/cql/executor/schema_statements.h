// Schema statements: CREATE / ALTER / DROP KEYSPACE and TABLE, TRUNCATE, USE,
// bound to the catalog and run against the Database, with Cassandra's
// validation rules and messages (InvalidArgument -> 0x2200, AlreadyExists ->
// 0x2400 via error_mapping.h).
//
// Table properties understood: comment, default_time_to_live,
// gc_grace_seconds, and Tessera's distribution ('hash' | 'range') and
// initial_tablets (a power of two, hash tables); any other property
// (compaction, caching, ...) is kept as given and shown back, not interpreted.
// Keyspace properties: replication (a map with 'class' SimpleStrategy or
// NetworkTopologyStrategy) and durable_writes.
//
// Thread safety: functions are thread-safe (the Database is).
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "cql/parser/raw_statements.h"
#include "cql/protocol/responses.h"
#include "coordinator/coordinator.h"
#include "db/database.h"

namespace tessera::cql {

// What a schema statement did: the change to report (RESULT Schema_change
// and the SCHEMA_CHANGE event), or nothing (IF [NOT] EXISTS that did nothing).
struct SchemaOutcome {
  std::optional<SchemaChange> change;
  std::string table_uuid;  // CREATE TABLE: the new table's uuid (16 bytes)
};

// The keyspace a statement names, else the connection's `current` one.
std::string KeyspaceOf(const QualifiedName& name, const std::string& current);
// The error for a statement that names no keyspace on a connection that has none.
Status NoKeyspace();

// Builds the table a CREATE TABLE describes. `current_keyspace` is used when
// the statement names none. Errors: InvalidArgument in Cassandra's words.
// `user_types` resolves user-defined type names (null: none exist).
Result<TableSchema> BuildTableSchema(const CreateTableStatement& stmt, const std::string& current_keyspace,
                                     const UserTypeLookup* user_types = nullptr);
// The WITH properties of a CREATE TABLE (or CREATE MATERIALIZED VIEW) applied
// to `table`. Errors: InvalidArgument, SyntaxError (as CREATE TABLE).
Status ApplyCreateTableProperties(const std::vector<Property>& properties, TableSchema* table);
// A column's type as written in CREATE or ALTER TABLE. Errors: InvalidArgument
// ("Unknown type ks.name", the parser's message otherwise).
Result<CqlType> ParseColumnType(const std::string& text, const std::string& keyspace, const UserTypeLookup* user_types);
Result<KeyspaceMetadata> BuildKeyspace(const std::string& name, const std::vector<Property>& properties);

Result<SchemaOutcome> ExecuteCreateKeyspace(Database& db, const CreateKeyspaceStatement& stmt);
Result<SchemaOutcome> ExecuteAlterKeyspace(Database& db, const AlterKeyspaceStatement& stmt);
// `table_uuid` (16 bytes) names the new table; empty: a random one. A
// cluster gives every node the uuid the first node chose.
Result<SchemaOutcome> ExecuteCreateTable(Database& db, const CreateTableStatement& stmt, const std::string& keyspace,
                                         const std::string& table_uuid = {});
// CREATE SEQUENCE (db/sequences.h); DROP SEQUENCE goes through ExecuteDrop.
// Errors: InvalidArgument (no keyspace, options, exists), SyntaxError (unknown property).
Status ExecuteCreateSequence(Database& db, const CreateSequenceStatement& stmt, const std::string& keyspace);
Result<SchemaOutcome> ExecuteAlterTable(Database& db, const AlterTableStatement& stmt, const std::string& keyspace);
Result<SchemaOutcome> ExecuteDrop(Database& db, const DropStatement& stmt, const std::string& keyspace);
Status ExecuteTruncate(Coordinator& coordinator, const TruncateStatement& stmt, const std::string& keyspace);

}  // namespace tessera::cql
