// The Key Visualizer's JSON, as served at /keyvisualizer/data.json.
//
//   {"node": "127.0.0.1", "now_micros": N, "column_seconds": 60,
//    "max_columns": 360, "max_rows": 1000,
//    "memory_bytes": N, "memory_bound_bytes": N,
//    "metrics": ["writes", "reads", "bytes", "latency_us"],
//    "tables": [{
//      "id": 5, "name": "ks.t", "distribution": "range",
//      "columns": [{"start_micros": N, "end_micros": N, "tables_left_out": 0,
//                   "rows": [{"key": "<hex of the start bound>", "end": "<hex>",
//                             "label": "'a'", "end_label": "'m'",
//                             "tablet": 12, "tablets": 1, "node": "127.0.0.1",
//                             "writes": 1.5, "reads": 0, "bytes": 80,
//                             "latency_us": 120}]}],
//      "pattern": {...the headline: a tail or band before a moving spot,
//                  before an even spread, then the busier metric...},
//      "patterns": [{"metric": "writes", "kind": "monotonic_tail",
//                    "shape": "diagonal", "share": 0.99, "operations": N,
//                    "columns": N, "evidence": "...", "title": "...",
//                    "advice": "...", "ddl": "CREATE TABLE ..."}, {"metric": "reads", ...}],
//      "events": [{"at_micros": N, "kind": "split", "from": [1], "to": [2, 3],
//                  "reason": "..."}]}]}
//
// Values are per second over the column; latency_us is the table's mean
// per database call (keyviz/history.h). Keys are hex, so they compare
// as the storage keys do. A row covers [key, end); an empty end is the
// table's end. Rows without reads, writes or bytes are left out, so the JSON
// grows with activity, not with idle time. Events are the database's
// split, merge and hold events (a bounded list, db/database.h) from the first
// column on.
//
// Thread safety: pure over its arguments; Database calls are thread-safe.
#pragma once

#include <string>

#include "keyviz/history.h"

namespace tessera {
class Database;
}

namespace tessera::keyviz {

struct JsonOptions {
  std::string node;           // this node's address
  std::string table;          // "keyspace.table"; empty: every table
  size_t last_columns = 0;    // newest columns to include; 0: all
};

std::string RenderKeyVizJson(Database& db, const KeyVizHistory& history, const JsonOptions& options);

}  // namespace tessera::keyviz
