// RequestConsistency: the consistency level, write type and time-outs of the
// client request a thread is executing, for the replicas of a replicated
// tablet (cluster/replicated_tablet.h) to honour. A single node ignores it.
//
// Why a thread-local scope and not a parameter: the executor runs each
// request synchronously on one thread, from the statement down through
// Database to a tablet's Replica (Database never hands work to other
// threads), and every read and write path in between (slices, ranges,
// buckets, batches, list reads before writes) would otherwise carry the
// level. The executor opens a ScopedRequestConsistency around each request;
// outside one the level is ONE.
//
// Values: consistency levels are the native protocol's [consistency] codes
// (v4 §3), FROZEN ON THE WIRE. Write types are the names WriteTimeout
// carries (v4 §9).
//
// Thread safety: each thread sees its own current value.
#pragma once

#include <cstdint>

namespace tessera {

enum class ConsistencyLevel : uint16_t {
  kAny = 0x0000, kOne = 0x0001, kTwo = 0x0002, kThree = 0x0003, kQuorum = 0x0004, kAll = 0x0005,
  kLocalQuorum = 0x0006, kEachQuorum = 0x0007, kSerial = 0x0008, kLocalSerial = 0x0009, kLocalOne = 0x000A,
};

// Cassandra's name of a level, e.g. "QUORUM", "LOCAL_ONE".
const char* ConsistencyLevelName(ConsistencyLevel level);

enum class WriteType : uint8_t { kSimple, kBatch, kUnloggedBatch, kCounter, kCas };
// "SIMPLE", "BATCH", "UNLOGGED_BATCH", "COUNTER", "CAS".
const char* WriteTypeName(WriteType type);

struct RequestConsistency {
  ConsistencyLevel level = ConsistencyLevel::kOne;
  WriteType write_type = WriteType::kSimple;
};

// The calling thread's current request consistency (ONE, SIMPLE outside a scope).
const RequestConsistency& CurrentRequestConsistency();

// Sets the calling thread's request consistency for its lifetime and restores
// the previous one after. REQUIRES: destroyed on the thread that made it.
class ScopedRequestConsistency {
 public:
  explicit ScopedRequestConsistency(RequestConsistency consistency);
  ~ScopedRequestConsistency();
  ScopedRequestConsistency(const ScopedRequestConsistency&) = delete;
  ScopedRequestConsistency& operator=(const ScopedRequestConsistency&) = delete;

 private:
  RequestConsistency previous_;
};

}  // namespace tessera
