// Binds terms to serialized values for a receiver of a known type: literals
// (literals.h), bind markers (the request's values, validated against the
// type), and the CQL functions a value may be: now(), currentTimeUUID()
// (version-1 timeuuid of the statement's time), uuid() (random version 4),
// currentTimestamp(), currentDate(), currentTime(), toTimestamp(x),
// toUnixTimestamp(x), toDate(x) over now() or a timestamp; minTimeuuid(t) and
// maxTimeuuid(t) (the least and greatest timeuuid of millisecond t, for ranges); bit_reverse(bigint
// [, preserve_sign]) (Spanner's BIT_REVERSE), nextval([ks.]sequence)
// (db/sequences.h, through BindContext::next_value), and the blob conversions
// <type>AsBlob(x) and blobAs<type>(b) for every native type (the bytes stay;
// blobAs<type> checks they are a valid <type>).
//
// Thread safety: a BindContext is used by one statement execution.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/parser/raw_statements.h"
#include "cql/protocol/wire.h"
#include "types/cql_type.h"

namespace tessera::cql {

// One bound value: bytes, null or unset (protocol v4 §3 [value]).
struct BoundValue {
  enum class Kind { kValue, kNull, kUnset } kind = Kind::kNull;
  std::string bytes;  // serialized, native protocol v4 §6
};

struct BindContext {
  const std::vector<WireValue>* values = nullptr;       // by marker index
  int64_t now_micros = 0;                                // the statement's time
  std::mt19937_64* rng = nullptr;                        // uuid(); REQUIRES non-null when used
  // nextval(seq): the next value of sequence "ks.name" or "name" (the session's
  // keyspace), db/sequences.h. Empty: nextval is refused (InvalidArgument).
  std::function<Result<int64_t>(const std::string& sequence)> next_value;
};

// Errors: InvalidArgument ("Invalid ... for "col" of type ...", "Expected N
// bind values", "Invalid unset value for ...").
Result<BoundValue> BindTerm(const Term& term, const CqlType& type, const std::string& receiver,
                            const BindContext& ctx);

// The native type of a blob conversion function, by its lower-case name: `<type>asblob`
// (*to_blob = true) or `blobas<type>` (*to_blob = false); nullopt for any other name.
std::optional<CqlType> BlobConversionType(const std::string& function, bool* to_blob);

// common/time_uuid.h's MakeTimeUuid with a clock sequence and node from `rng`.
std::string MakeTimeUuid(int64_t micros, std::mt19937_64& rng);

// The calling thread's generator, for BindContext::rng (seeded once per
// thread from std::random_device). A generator is not thread-safe: requests
// running at once bind and project on different threads, so each draws from
// its own thread's and none shares one.
std::mt19937_64& ThreadRandom();

}  // namespace tessera::cql
