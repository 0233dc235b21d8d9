// Catalog: keyspaces and tables, persisted in the storage engine's meta
// column family so that schema survives restart.
//
// Meta keys (FROZEN ON DISK): "keyspace/<name>" -> keyspace JSON,
// "table/<keyspace>/<name>" -> table JSON (types/schema_json.h),
// "type/<keyspace>/<name>" -> user-defined type JSON,
// "function/<keyspace>/<name>(<types>)" and "aggregate/<keyspace>/<name>(<types>)"
// -> user-defined function / aggregate JSON (catalog_functions.cc),
// "next_table_id" -> decimal text. Table ids are never reused, so data of a
// dropped table can never be mistaken for a new table's.
//
// Every schema change bumps version(), which the CQL layer reports as the
// schema version.
//
// Thread safety: all methods are thread-safe; returned schemas are immutable
// snapshots.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/status.h"
#include "storage/storage_engine.h"
#include "types/schema.h"
#include "types/user_function.h"

namespace tessera {

class Catalog {
 public:
  // REQUIRES: engine outlives the catalog.
  explicit Catalog(StorageEngine* engine) : engine_(engine) {}

  // Loads the persisted schema and registers tables with the engine's registry.
  // Errors: Corruption on an unreadable document, IOError from storage.
  Status Load();

  // Errors: AlreadyExists, InvalidArgument (empty name), IOError.
  Status CreateKeyspace(const KeyspaceMetadata& ks);
  // Replaces a keyspace's replication and durable_writes. Errors: NotFound, IOError.
  Status AlterKeyspace(const KeyspaceMetadata& ks);
  // Returns the dropped keyspace's tables (for data removal).
  // Errors: NotFound, IOError.
  Result<std::vector<std::shared_ptr<const TableSchema>>> DropKeyspace(const std::string& name);

  // Assigns the table id, a random uuid and column ids (in the given column
  // order), validates and persists. Errors: NotFound (keyspace),
  // AlreadyExists, InvalidArgument (Validate), IOError.
  Result<std::shared_ptr<const TableSchema>> CreateTable(TableSchema table);
  // Replaces a table's schema (same id). New columns must have id 0 (one is
  // assigned); key columns cannot change. The bucket versions and partition-bucket
  // histories are kept as they are unless `layout_change` (only
  // Database::ChangeBucketCount and ChangePartitionBuckets, which hold the writes
  // back while they change them). Errors: NotFound, InvalidArgument, IOError.
  Result<std::shared_ptr<const TableSchema>> AlterTable(TableSchema table, bool layout_change = false);
  Result<std::shared_ptr<const TableSchema>> DropTable(const std::string& keyspace, const std::string& name);

  Result<std::shared_ptr<const TableSchema>> GetTable(const std::string& keyspace, const std::string& name) const;
  std::shared_ptr<const TableSchema> GetTableById(uint32_t id) const;
  Result<KeyspaceMetadata> GetKeyspace(const std::string& name) const;
  std::vector<KeyspaceMetadata> Keyspaces() const;
  std::vector<std::shared_ptr<const TableSchema>> Tables(const std::string& keyspace) const;
  std::vector<std::shared_ptr<const TableSchema>> AllTables() const;
  uint64_t version() const;

  // --- user-defined types (CQL CREATE / ALTER / DROP TYPE), catalog_types.cc ---
  // REQUIRES: type.kind() == kUdt, its fields resolved. Errors: NotFound
  // (keyspace), AlreadyExists, IOError.
  Status CreateType(const CqlType& type);
  // Replaces a type's definition (ALTER TYPE ADD / RENAME: fields only ever
  // appended or renamed, so stored values stay readable); every table column
  // and every other type holding it gets the new definition. Errors: NotFound, IOError.
  Status AlterType(const CqlType& type);
  // Errors: NotFound; InvalidArgument (Cassandra's words) while a table or
  // another type uses it.
  Status DropType(const std::string& keyspace, const std::string& name);
  // The type, frozen; nullopt if there is none.
  std::optional<CqlType> GetType(const std::string& keyspace, const std::string& name) const;
  std::vector<CqlType> Types(const std::string& keyspace) const;  // by name
  // Resolves "name" in `keyspace` and "ks.name" anywhere (CqlType::Parse).
  // The lookup reads the catalog when called; it must not outlive it.
  UserTypeLookup TypeLookup(const std::string& keyspace) const;

  // --- user-defined functions and aggregates, catalog_functions.cc ---
  // A function or aggregate is keyed by keyspace, name and argument types.
  // Errors: NotFound (keyspace; an aggregate's state or final function),
  // AlreadyExists (same signature, unless or_replace), InvalidArgument (a
  // function and an aggregate of one name), IOError.
  Status CreateFunction(const UserFunction& f, bool or_replace);
  Status CreateAggregate(const UserAggregate& a, bool or_replace);
  // Drops the one function (aggregate) of that name, of that signature when
  // given, and returns it. Errors: NotFound; InvalidArgument (Cassandra's
  // words) when several overloads match, or an aggregate uses the function.
  Result<UserFunction> DropFunction(const std::string& keyspace, const std::string& name,
                                    const std::optional<std::vector<CqlType>>& argument_types);
  Result<UserAggregate> DropAggregate(const std::string& keyspace, const std::string& name,
                                      const std::optional<std::vector<CqlType>>& argument_types);
  // By name, then signature.
  std::vector<UserFunction> Functions(const std::string& keyspace) const;
  std::vector<UserAggregate> Aggregates(const std::string& keyspace) const;

 private:
  Status LoadTypes();      // REQUIRES: mu_ held
  Status LoadFunctions();  // REQUIRES: mu_ held, types loaded
  // DROP KEYSPACE's part: its functions and aggregates. REQUIRES: mu_ held.
  Status DropFunctionsOfKeyspaceLocked(const std::string& keyspace);
  // "name" in `keyspace`, or "ks.name". REQUIRES: mu_ held.
  std::optional<CqlType> FindTypeLocked(const std::string& keyspace, const std::string& name) const;
  Status PersistTable(const TableSchema& t);
  std::string TableKey(const std::string& ks, const std::string& name) const { return "table/" + ks + "/" + name; }

  StorageEngine* engine_;
  mutable std::mutex mu_;
  std::map<std::string, KeyspaceMetadata> keyspaces_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const TableSchema>> tables_;
  std::map<std::pair<std::string, std::string>, CqlType> types_;  // frozen definitions
  // (keyspace, name, argument types as CQL text) -> definition
  using FunctionKey = std::tuple<std::string, std::string, std::string>;
  std::map<FunctionKey, UserFunction> functions_;
  std::map<FunctionKey, UserAggregate> aggregates_;
  uint32_t next_table_id_ = 1;
  uint64_t version_ = 0;
};

}  // namespace tessera
