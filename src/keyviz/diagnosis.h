// Diagnosis: a named pattern (keyviz/patterns.h) turned into what a user
// reads beside the picture: a title, the seeds' advice (from key advice,
// db/key_advice.h, where live detection has it) and the DDL of a design that
// fixes it.
//
// The DDL creates a new table beside the old one (CQL has no ALTER of a
// primary key):
//  - monotonic_tail: a hash-prefix bucket as the first partition-key
//    component of a range table, PRIMARY KEY ((bucket, <pk>), <ck>). Writes
//    spread over `buckets` key ranges, and a time-range read asks each bucket
//    and merges (Tablestore's hash prefix, Spanner's ShardId).
//  - hot_band on one partition: a bucket as the last partition-key component,
//    so the partition spreads over `buckets` partitions (GeminiDB's random
//    suffix).
//  - hot_band on a range of many partitions of a range table: the same table
//    WITH distribution = 'hash'. On a hash table no DDL is needed: the
//    balancer's load split cuts a hot range of many partitions.
//  - even, single_tablet, idle, moving_hotspot: no DDL.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "keyviz/patterns.h"
#include "types/schema.h"

namespace tessera::keyviz {

struct DiagnosisInput {
  std::string hot_partition;  // the hottest partition as a CQL literal ('celebrity'); empty when unknown
  std::string advancing_column;  // the column the inserts follow (key advice); empty: the first key column
  std::string advice;         // key advice's text for this table and condition; empty when none is live
  int buckets = 16;           // for the bucketed designs
};

struct Diagnosis {
  std::string title;   // e.g. "Diagonal: a monotonic tail on ts"
  std::string advice;  // what to do, in sentences
  std::string ddl;     // CREATE TABLE ...; empty when no change is needed
};

Diagnosis Diagnose(const Pattern& pattern, const TableSchema& table, const DiagnosisInput& input);

// The table's CREATE TABLE statement renamed to `name`, with a `bucket
// smallint` partition-key component added first (`bucket_first`) or last,
// and the given distribution. Only the columns, key, clustering order and
// distribution are kept.
std::string RedesignedTableCql(const TableSchema& table, const std::string& name, bool add_bucket, bool bucket_first,
                               Distribution distribution);

}  // namespace tessera::keyviz
