// Design lint: the seeds' key-design problems read from a table's declared
// schema, before any row exists, each with the DDL that fixes it. CREATE
// TABLE and ALTER TABLE answer with them as client warnings, and
// system.key_advice shows them as rows of kind `schema`. Heuristics, named
// here so that a user can tell why a design was flagged:
//  - monotonic_leading_key (range tables only: hash tables spread any key):
//    the first partition-key column is a timestamp, timeuuid or date, or an
//    integer whose name reads like a sequence or id counter (id, *_id, *id,
//    seq*, serial, counter, *_no, *num*, but not shard / bucket / hash).
//    Every insert lands on the last tablet (Spanner's UserAccessLog).
//    Fix: a bucket leading the partition key (hash of another column mod 16).
//  - low_cardinality_partition_key: a one-column partition key that can take
//    few values: boolean, tinyint, a date alone, or a name like status,
//    state, type, kind, category, gender, flag, level or *_code. A few huge
//    partitions that no split can spread. Fix: add a high-cardinality column
//    or a bucket to the partition key.
//  - unbounded_time_series: the first clustering column is a timestamp,
//    timeuuid or date and no partition-key column is time-like (a timestamp,
//    date or timeuuid, or a name like bucket, day, date, week, month, hour,
//    year, period, window). Rows per partition are estimated with Cassandra's
//    N_v = N_r (N_c - N_pk - N_s) + N_s: the rows a partition can hold before
//    the partition_rows_warn guardrail or 100,000 values, whichever comes
//    first; at an assumed one row a second, the largest of month, week, day
//    and hour that stays under it is proposed as a time bucket.
// Silent when none applies.
//
// Thread safety: pure function.
#pragma once

#include <vector>

#include "db/guardrails.h"
#include "db/key_advice.h"
#include "types/schema.h"

namespace tessera {

// Rows with kind "schema"; `subject` is the rule (above) and the column.
std::vector<KeyAdvice> LintTableDesign(const TableSchema& table, const Guardrails& guardrails);

// "Design lint (rule): evidence. advice" — the text of a client warning.
std::string LintWarning(const KeyAdvice& advice);

}  // namespace tessera
