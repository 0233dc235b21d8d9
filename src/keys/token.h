// Tokens of partition keys, identical to Cassandra's Murmur3Partitioner.
//
// The hashed bytes are the partition key's serialized value for a single
// column, and for a composite key the CompositeType form: for each component
// a 2-byte big-endian length, the bytes, then a 0x00 end-of-component byte.
// Token = first 64 bits of CassandraMurmur3, with INT64_MIN mapped to
// INT64_MAX (Cassandra reserves INT64_MIN as the ring's minimum token).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

using Token = int64_t;

constexpr Token kMinToken = INT64_MIN;  // never the token of a key
constexpr Token kMaxToken = INT64_MAX;

// The bytes Cassandra hashes (and drivers send as the routing key).
// REQUIRES: every component is at most 65535 bytes when there are several.
std::string RoutingKey(const std::vector<std::string_view>& serialized_components);

Token TokenOfRoutingKey(std::string_view routing_key);
Token TokenOfPartitionKey(const std::vector<std::string_view>& serialized_components);

}  // namespace tessera
