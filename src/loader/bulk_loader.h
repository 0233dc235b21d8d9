// BulkLoader: `tessera load` — records of a CSV, TSV or JSON-lines file into
// one table through the CQL front door: a prepared INSERT, several
// connections, many requests in flight on each.
//
// Flow: the calling thread reads records (record_reader.h), maps fields to
// columns, converts them by the prepared statement's column types
// (field_converter.h) and queues them; each connection's worker keeps up to
// `inflight` EXECUTEs outstanding. A record that cannot be read, mapped or
// converted, or that the server refuses (e.g. Invalid: a missing key), goes
// to the reject file with its line number and the reason — never dropped
// silently. Retryable server errors (Unavailable, Overloaded, timeouts) and
// lost connections are retried with exponential backoff and full jitter up to
// max_retries; Unprepared re-prepares. Every node of the one-node cluster owns
// every token, so routing is trivially token-aware.
//
// Reject file: a header line, then one line per rejected record:
//   <line>\t<reason>\t<record text, newlines as \n>
//
// Errors (Status): the setup ones only — cannot connect, unknown table, a
// mapped field or column that does not exist, cannot open the file.
// Thread safety: RunLoad may run concurrently with other loads; the
// progress callback runs on a separate thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/cql_connection.h"
#include "common/status.h"
#include "loader/field_converter.h"
#include "loader/record_reader.h"

namespace tessera::loader {

struct ColumnMapping {
  std::string column;  // table column
  // Input field name (or 1-based position without a header), or "@line":
  // the record's line number (a unique key for files whose rows repeat).
  std::string field;
};

struct LoadOptions {
  client::ClientOptions client;
  std::string keyspace, table;
  std::string path;
  Format format = Format::kCsv;
  bool header = true;
  // Empty: every input field (CSV/TSV header) or every table column (JSON
  // lines) is loaded into the column of the same name.
  std::vector<ColumnMapping> mapping;
  TimestampUnit timestamp_unit = TimestampUnit::kMilliseconds;
  std::string reject_path;  // empty: <path>.rejects
  int connections = 4;
  int inflight = 32;        // requests in flight per connection
  double max_rows_per_second = 0;  // 0: as fast as the server takes them
  int max_retries = 5;
  int64_t retry_base_micros = 50'000;
  int64_t retry_max_micros = 5'000'000;
};

struct LoadProgress {
  uint64_t records = 0;   // read from the file
  uint64_t loaded = 0;    // acknowledged by the server
  uint64_t rejected = 0;  // written to the reject file
  uint64_t retries = 0;
  uint64_t bytes_read = 0, file_size = 0;
  double seconds = 0;
  bool done = false;
};

// Runs the load; `progress` (may be empty) is called about five times a
// second and once more with done = true. Returns the final counts.
Result<LoadProgress> RunLoad(const LoadOptions& options, const std::function<void(const LoadProgress&)>& progress);

// The delay before retry number `attempt` (1-based): uniform in
// [0, min(max, base * 2^(attempt-1))] ("full jitter"). `random01` in [0, 1).
int64_t RetryDelayMicros(int attempt, int64_t base_micros, int64_t max_micros, double random01);

}  // namespace tessera::loader
