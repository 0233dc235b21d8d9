// Version-1 (time-based) UUIDs as CQL's timeuuid holds them (RFC 4122, 16
// bytes in network order): the 60-bit count of 100-ns ticks since
// 1582-10-15, then the variant, clock sequence and node bytes. now()'s
// values and tracing's session and event ids (tracing/trace_store.h).
//
// Thread safety: thread-safe (MakeTimeUuid keeps one process-wide atomic).
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

// 100-ns ticks from 1582-10-15 (the timeuuid epoch) to 1970-01-01.
inline constexpr int64_t kGregorianOffset100ns = 0x01B21DD213814000LL;

// A version-1 UUID of `ticks` (100-ns since 1582-10-15) with the given
// clock sequence and node bytes (the uuid's last 8 bytes, variant included).
std::string TimeUuidOf(int64_t ticks, uint64_t clock_seq_and_node);

// A version-1 UUID for `unix_micros` with a clock sequence and node taken
// from `random`; strictly increasing per process for equal or decreasing
// input times (as Cassandra's UUIDGen).
std::string MakeTimeUuid(int64_t unix_micros, uint64_t random);

// Microseconds of the system clock since 1970-01-01: for timestamps (see
// common/steady_micros.h for durations).
int64_t UnixMicros();

// MakeTimeUuid of `unix_micros` with random bits of the calling thread's own
// generator: trace session and event ids.
std::string NewTimeUuid(int64_t unix_micros = UnixMicros());

}  // namespace tessera
