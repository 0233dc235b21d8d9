// Raw statements: what the CQL parser produces, before any schema is
// consulted (ScyllaDB's split). Names are as written (unquoted identifiers
// lower-cased, quoted ones kept); terms are literals, bind markers,
// collection literals and function calls, with their source positions so
// that the executor can report errors where they are.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cql/parser/lexer.h"

namespace tessera::cql {

struct Term {
  enum class Kind {
    kString, kInteger, kFloat, kBoolean, kUuid, kBlob, kDuration, kNull,  // literals (text holds the literal)
    kBindMarker,       // ? or :name; bind_index is its position among all markers
    kList, kSet, kMap, kTuple,  // [..], {..}, {k: v, ..}, (..): elements (and map_values)
    kUserType,         // {field: v, ..}: field_names[i] is elements[i]'s field
    kFunctionCall,     // name(args): uuid(), now(), toTimestamp(now()), ...
    kTypeHint,         // (type) term: type_name, elements[0]
    kOperation,        // elements[0] op elements[1] (function_name: + - * / %), or - elements[0]
  };
  Kind kind = Kind::kNull;
  SourcePosition position;
  std::string text;               // literal text (strings unescaped; blobs as hex; integers with sign)
  int bind_index = -1;
  std::string bind_name;          // :name markers
  std::string function_name;      // kFunctionCall; type name for kTypeHint
  std::vector<Term> elements;     // list, set, tuple, call arguments; map literal: the keys
  std::vector<Term> map_values;   // map literal: the value of elements[i] (a pair<Term, Term> would
                                  // need Term complete inside its own definition)
  std::vector<std::string> field_names;  // kUserType
};

struct QualifiedName {
  std::string keyspace;  // empty: the connection's current keyspace
  std::string name;
};

// WITH name = value AND ... (table and keyspace properties).
struct Property {
  std::string name;
  Term value;  // a constant or a map literal
};

// A restriction in WHERE (or IF).
struct Relation {
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kContains, kContainsKey, kLike, kIsNotNull };
  enum class Lhs { kColumn, kMultiColumn, kToken, kMapElement, kField };
  Lhs lhs = Lhs::kColumn;
  std::vector<std::string> columns;  // one; several for (a, b) > ... and token(a, b)
  std::optional<Term> map_key;       // kMapElement: col[key]
  std::string field;                 // kField: col.field (IF conditions on user types)
  Op op = Op::kEq;
  Term value;                        // the right-hand side (a tuple or a marker for IN ?)
  std::vector<Term> in_values;       // IN (v1, v2, ...)
  bool in_marker = false;            // IN ?
  SourcePosition position;
};

struct Selector {
  // kOperation: args[0] name args[1] (name: + - * / %), or - args[0] (one argument).
  enum class Kind { kColumn, kFunction, kCountStar, kWritetime, kTtl, kCast, kTerm, kField, kElement, kSlice, kOperation };
  Kind kind = Kind::kColumn;
  std::string name;                  // column, function name, or kField: the field of args[0]
  std::vector<Selector> args;
  std::string cast_type;             // kCast
  std::optional<Term> term;          // kTerm; kElement: the key of args[0][key]
  std::optional<Term> slice_from;    // kSlice: args[0][from..to], either end may be open
  std::optional<Term> slice_to;
  std::string alias;                 // AS alias
  SourcePosition position;
};

struct Using {
  std::optional<Term> ttl;
  std::optional<Term> timestamp;
};

struct ColumnDeclaration {
  std::string name;
  std::string type;   // CQL type text as written, parsed by CqlType::Parse
  bool is_static = false;
  bool primary_key = false;  // `name type PRIMARY KEY`
  SourcePosition position;
};

struct SelectStatement {
  QualifiedName table;
  bool json = false;
  bool distinct = false;
  bool star = false;
  std::vector<Selector> selectors;
  std::vector<Relation> where;
  std::vector<std::string> group_by;                   // GROUP BY columns, as written
  std::vector<std::pair<std::string, bool>> order_by;  // column, descending
  // ORDER BY column ANN OF vector (Cassandra 5.0): rows nearest the vector
  // first, through the column's vector index. Never beside order_by.
  struct AnnOrdering {
    std::string column;
    Term vector;
  };
  std::optional<AnnOrdering> ann;
  std::optional<Term> limit;
  std::optional<Term> per_partition_limit;
  bool allow_filtering = false;
};

struct InsertStatement {
  QualifiedName table;
  std::vector<std::string> columns;
  std::vector<Term> values;
  std::optional<Term> json;        // INSERT ... JSON '...'
  bool json_default_unset = false; // DEFAULT UNSET (DEFAULT NULL otherwise)
  bool if_not_exists = false;
  Using using_clause;
};

struct Assignment {
  enum class Op { kSet, kAppend, kPrepend, kRemove, kSetElement, kSetField, kCounterAdd, kCounterSubtract };
  std::string column;
  std::string field;        // kSetField: col.field = value
  Op op = Op::kSet;
  std::optional<Term> key;  // kSetElement: col[key] = value
  Term value;
  SourcePosition position;
};

struct UpdateStatement {
  QualifiedName table;
  Using using_clause;
  std::vector<Assignment> assignments;
  std::vector<Relation> where;
  bool if_exists = false;
  std::vector<Relation> conditions;  // IF col = value ...
};

struct DeleteStatement {
  struct Target {
    std::string column;
    std::optional<Term> key;  // col[key]
    std::string field;        // col.field
  };
  QualifiedName table;
  std::vector<Target> columns;  // empty: the whole row(s)
  Using using_clause;           // TIMESTAMP only
  std::vector<Relation> where;
  bool if_exists = false;
  std::vector<Relation> conditions;
};

struct BatchStatement {
  enum class Type { kLogged, kUnlogged, kCounter };
  Type type = Type::kLogged;
  Using using_clause;
  std::vector<std::variant<InsertStatement, UpdateStatement, DeleteStatement>> statements;
};

struct CreateKeyspaceStatement {
  std::string name;
  bool if_not_exists = false;
  std::vector<Property> properties;
};

struct AlterKeyspaceStatement {
  std::string name;
  std::vector<Property> properties;
};

struct CreateTableStatement {
  QualifiedName table;
  bool if_not_exists = false;
  std::vector<ColumnDeclaration> columns;
  std::vector<std::string> partition_key;  // from PRIMARY KEY ((a, b), c, d) or an inline PRIMARY KEY
  std::vector<std::string> clustering;
  std::vector<std::pair<std::string, bool>> clustering_order;  // column, descending
  bool compact_storage = false;
  std::vector<Property> properties;
};

// CREATE MATERIALIZED VIEW (Cassandra 4.1): the view's columns are the base
// columns of the same names.
struct CreateViewStatement {
  QualifiedName view;
  QualifiedName base;
  bool if_not_exists = false;
  std::vector<std::string> columns;   // SELECT list; empty: *
  std::vector<std::string> not_null;  // WHERE c IS NOT NULL AND ...
  std::vector<std::string> partition_key;
  std::vector<std::string> clustering;
  std::vector<std::pair<std::string, bool>> clustering_order;  // column, descending
  std::vector<Property> properties;
};

struct AlterTableStatement {
  enum class Op { kAdd, kDrop, kRename, kWith, kAlterType };
  QualifiedName table;
  bool materialized_view = false;  // ALTER MATERIALIZED VIEW v WITH ... (op kWith)
  Op op = Op::kWith;
  std::vector<ColumnDeclaration> added;
  std::vector<std::string> dropped;
  std::vector<std::pair<std::string, std::string>> renamed;
  std::vector<Property> properties;
};

// CREATE SEQUENCE [IF NOT EXISTS] [ks.]name [WITH kind = 'bit_reversed_positive'
// AND skip_range_min = a AND skip_range_max = b AND start_with_counter = n]
// (a Tessera extension after Spanner's CREATE SEQUENCE; db/sequences.h).
struct CreateSequenceStatement {
  QualifiedName name;
  bool if_not_exists = false;
  std::vector<Property> properties;
};

// CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, ...).
struct CreateTypeStatement {
  QualifiedName name;
  bool if_not_exists = false;
  std::vector<std::pair<std::string, std::string>> fields;  // name, CQL type text as written
};

// CREATE [CUSTOM] INDEX [IF NOT EXISTS] [name] ON [ks.]table (target)
// [USING 'class' [WITH OPTIONS = {...}]]; target: col | KEYS(col) |
// VALUES(col) | ENTRIES(col) | FULL(col) (Cassandra 4.1 CQL §secondary indexes).
struct CreateIndexStatement {
  enum class Target { kSimple, kKeys, kValues, kEntries, kFull };
  std::string name;  // empty: the default <table>_<column>_idx
  std::string name_keyspace;  // ks. written before the index name, if any
  QualifiedName table;
  bool if_not_exists = false;
  Target target = Target::kSimple;  // kSimple: the column itself (VALUES for a non-frozen collection)
  std::string column;
  std::optional<std::string> custom_class;  // USING '...'
  std::vector<Property> properties;         // WITH OPTIONS = {...} after USING
};

// DESCRIBE / DESC (Cassandra 4.0's server-side statement): [FULL] SCHEMA,
// KEYSPACES, [ONLY] KEYSPACE [ks], TABLES, TABLE [ks.]t, TYPES, TYPE [ks.]t,
// INDEX [ks.]i, or [ks.]name (whatever the name is: keyspace, table, type, index).
struct DescribeStatement {
  enum class Target {
    kSchema, kKeyspaces, kKeyspace, kTables, kTable, kTypes, kType, kIndex,
    kFunctions, kFunction, kAggregates, kAggregate, kView, kName
  };
  Target target = Target::kSchema;
  QualifiedName name;  // kKeyspace: name.name (empty: the current keyspace)
  bool full = false;   // FULL SCHEMA: system keyspaces too
  bool only = false;   // ONLY KEYSPACE: the keyspace without its contents
};

// ALTER TYPE [ks.]name ADD field type | RENAME f TO g [AND f2 TO g2 ...] | ALTER f TYPE t.
struct AlterTypeStatement {
  enum class Op { kAdd, kRename, kAlterField };
  QualifiedName name;
  Op op = Op::kAdd;
  std::pair<std::string, std::string> added;  // kAdd: name, type text
  std::vector<std::pair<std::string, std::string>> renamed;
};

struct DropStatement {
  enum class Target { kKeyspace, kTable, kSequence, kType, kIndex, kView };
  Target target = Target::kTable;
  QualifiedName name;  // keyspace: name.name
  bool if_exists = false;
};

struct TruncateStatement { QualifiedName table; };

// --- roles and permissions (Cassandra 4's CQL: CREATE ROLE, GRANT, LIST ...) ---

// WITH PASSWORD = '..' AND LOGIN = true AND SUPERUSER = false AND OPTIONS = {..};
// CREATE USER's WITH PASSWORD '..' SUPERUSER | NOSUPERUSER land here too.
struct RoleOptions {
  std::optional<std::string> password;
  std::optional<bool> login;
  std::optional<bool> superuser;
  std::optional<std::vector<std::pair<std::string, std::string>>> options;
};

struct CreateRoleStatement {
  std::string role;  // unquoted names lower-cased; 'quoted' and "quoted" kept
  bool if_not_exists = false;
  RoleOptions options;
};

struct AlterRoleStatement {
  std::string role;
  RoleOptions options;
};

struct DropRoleStatement {
  std::string role;
  bool if_exists = false;
};

// GRANT role TO grantee / REVOKE role FROM grantee.
struct GrantRoleStatement {
  std::string role, grantee;
  bool revoke = false;
};

// LIST ROLES [OF r] [NORECURSIVE]; LIST USERS (users_form: the older result shape).
struct ListRolesStatement {
  std::optional<std::string> of;
  bool recursive = true;
  bool users_form = false;
};

// ALL KEYSPACES | KEYSPACE k | [TABLE] k.t | ALL ROLES | ROLE r.
struct ResourceName {
  enum class Kind { kAllKeyspaces, kKeyspace, kTable, kAllRoles, kRole };
  Kind kind = Kind::kAllKeyspaces;
  QualifiedName name;  // kKeyspace: name.name; kTable: keyspace and table (keyspace may be empty); kRole: name.name
};

// GRANT perms ON resource TO role / REVOKE perms ON resource FROM role.
struct PermissionStatement {
  std::vector<std::string> permissions;  // names as written (lower-cased identifiers); empty: ALL
  ResourceName resource;
  std::string role;
  bool revoke = false;
};

// LIST perms [ON resource] [OF role] [NORECURSIVE].
struct ListPermissionsStatement {
  std::vector<std::string> permissions;  // empty: ALL
  std::optional<ResourceName> resource;
  std::optional<std::string> of;
  bool recursive = true;
};
struct UseStatement { std::string keyspace; };

// CREATE [OR REPLACE] FUNCTION | AGGREGATE [IF NOT EXISTS] name (...) ..., and
// DROP FUNCTION | AGGREGATE [IF EXISTS] name [(types)]: parsed with
// Cassandra's grammar (CQL reference, "User-Defined Functions" and
// "User-Defined Aggregates") and refused while user-defined functions are
// disabled, Cassandra's default.
struct FunctionStatement {
  bool aggregate = false;  // AGGREGATE, else FUNCTION
  bool drop = false;       // DROP, else CREATE
  bool or_replace = false;
  bool if_not_exists = false;  // CREATE: IF NOT EXISTS; DROP: IF EXISTS
  QualifiedName name;
  std::vector<std::pair<std::string, std::string>> arguments;  // FUNCTION: (name, type)
  std::vector<std::string> argument_types;  // AGGREGATE, or DROP's optional signature
  bool signature_given = false;             // DROP: a parenthesised signature, maybe empty
  bool called_on_null_input = false;
  std::string return_type, language, body;  // FUNCTION
  std::string state_function, state_type, final_function;  // AGGREGATE
  std::optional<Term> initial_condition;                    // AGGREGATE
};

using RawStatement = std::variant<SelectStatement, InsertStatement, UpdateStatement, DeleteStatement, BatchStatement,
                                  CreateKeyspaceStatement, AlterKeyspaceStatement, CreateTableStatement,
                                  AlterTableStatement, DropStatement, TruncateStatement, UseStatement,
                                  CreateSequenceStatement, CreateTypeStatement, AlterTypeStatement, CreateIndexStatement, CreateViewStatement, DescribeStatement,
                                  CreateRoleStatement, AlterRoleStatement, DropRoleStatement, GrantRoleStatement,
                                  ListRolesStatement, PermissionStatement, ListPermissionsStatement,
                                  FunctionStatement>;

struct ParsedStatement {
  RawStatement statement;
  int bind_marker_count = 0;
  std::vector<std::string> bind_marker_names;  // per marker; empty for ?
};

}  // namespace tessera::cql
