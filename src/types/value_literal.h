// CQL literals for display: how system tables, warnings and key advice show
// a partition key (e.g. 'host-1', 42, (7, 'x')).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "types/cql_type.h"
#include "types/schema.h"

namespace tessera {

// `bytes` (a v4-serialized value of `type`) as a CQL literal: text quoted with
// '' escapes, integers as numbers, timestamps, dates and times as quoted
// strings ('1995-08-01 12:00:00.000000+0000'), UUIDs in 8-4-4-4-12 form,
// anything else (or a value that does not deserialize) as 0x hex.
std::string ValueLiteral(const CqlType& type, const std::string& bytes);
// A whole partition key: one literal, or a parenthesised list of them.
std::string PartitionKeyLiteral(const TableSchema& table, const std::vector<std::string>& partition_key);

}  // namespace tessera
