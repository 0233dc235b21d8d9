// Test harness for the embedded database: a temporary data directory, a
// manual clock, and helpers that build serialized values, mutations and reads.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/coordinator.h"
#include "db/database.h"
#include "types/value.h"

namespace tessera::testing {

class TestDatabase {
 public:
  explicit TestDatabase(const std::string& name, bool remove_existing = true);
  // With options (guardrails, balancer) set by `configure` on every open.
  struct Configure {
    std::function<void(DatabaseOptions*)> fn;
  };
  TestDatabase(const std::string& name, Configure configure);
  ~TestDatabase();
  Database* operator->() { return db_.get(); }
  Database& db() { return *db_; }
  // The coordinator above db() (started, as a single node's): writes through
  // it keep secondary indexes and views right.
  Coordinator& coordinator() { return *coordinator_; }
  // Closes and reopens on the same directory (restart); the manual clock
  // moves 1 ms on.
  void Reopen();
  void Close() {
    coordinator_.reset();
    db_.reset();
  }
  // Opens the directory (after Close, or a first time): the clock stays.
  void Open();
  const std::string& dir() const { return dir_; }
  // The manual clock, microseconds since the epoch.
  void AdvanceSeconds(int64_t s) { clock_->fetch_add(s * 1'000'000); }
  int64_t now_micros() const { return clock_->load(); }

 private:
  std::string dir_;
  std::shared_ptr<std::atomic<int64_t>> clock_;
  std::function<void(DatabaseOptions*)> configure_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<Coordinator> coordinator_;  // destroyed first: its builds use db_
};

std::string Int(int64_t v);      // serialized int
std::string Bigint(int64_t v);   // serialized bigint
std::string Text(const std::string& s);
int64_t AsInt(const std::string& serialized);
int64_t AsBigint(const std::string& serialized);

// CREATE KEYSPACE ks if needed and a table
//   (pk <pk_type> [, pk2 text], ck int [DESC], v text, s text static?) ...
// described by a compact spec: columns "name:type:kind[:desc]" with kind in
// {pk, ck, static, regular}.
std::shared_ptr<const TableSchema> MakeTable(Database& db, const std::string& name, Distribution d,
                                             const std::vector<std::string>& columns, uint32_t initial_tablets = 4);

// Table ks.pb (k int, c int, v text, s text static, PRIMARY KEY (k, c)), hash
// distributed on one tablet, WITH partition_buckets = `count` ('auto' when
// `automatic`: `count` is then its first count).
std::shared_ptr<const TableSchema> MakePartitionBucketed(Database& db, uint32_t count, bool automatic,
                                                         int32_t gc_grace = 864000);

// A mutation writing one row: INSERT with a row marker and text cells.
Mutation InsertRow(const std::shared_ptr<const TableSchema>& t, std::vector<std::string> pk,
                   std::vector<std::string> ck, const std::vector<std::pair<std::string, std::string>>& text_cells);

// The number of keys stored under the table's prefix (tombstones and all), as RocksDB holds them.
size_t RawKeys(Database& db, const TableSchema& t);

// The text value of a column in a row result, or "<absent>".
std::string CellText(const TableSchema& t, const RowResult& row, const std::string& column);

}  // namespace tessera::testing
