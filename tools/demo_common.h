// What the one-node demo (tools/demo_command.cc) and the cluster demo
// (tools/demo_cluster.h) share: the shipped access log's file and column
// mapping, and a query run for the report.
//
// Thread safety: none needed (each demo is one thread at these points).
#pragma once

#include <string>
#include <vector>

#include "client/cql_connection.h"
#include "common/status.h"
#include "demo/report.h"
#include "loader/bulk_loader.h"

namespace tessera {

// The NASA-HTTP access log of 1995-08-01 under `datasets`
// (nasa_http/nasa_19950801.tsv: host, time in Unix seconds, method, url,
// response, bytes) and its mapping onto the demo's access tables (columns
// ts, seq = the line number, host, method, url, response, bytes).
std::string NasaAccessLogPath(const std::string& datasets);
std::vector<loader::ColumnMapping> NasaAccessMapping();

// Runs `cql` (5,000 rows a page, all pages) and returns its rows formatted
// for the report, with how long it took. Errors: the query's.
Result<demo::QueryReport> AskForReport(client::CqlConnection& conn, const std::string& title, const std::string& cql);

// The single 8-byte value (bigint, counter, timestamp: milliseconds) the
// first row of `cql` holds, e.g. count(*) or max(ts). Errors: the query's;
// Corruption when it returned no such value.
Result<int64_t> AskForInt64(client::CqlConnection& conn, const std::string& cql);

}  // namespace tessera
