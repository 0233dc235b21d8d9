// RequestConsistency: the consistency level and write type of a client
// request, passed as a parameter from the executor (which reads them from the
// request: native protocol v4 §4.1.4, §4.1.7) through Database's read and
// write calls to each tablet's Replica (tablets/replica.h). The replicas of a
// replicated tablet (cluster/replicated_tablet.h) honour it; the local
// replica of a single node ignores it. A plain value: no request state lives
// in a thread (a request may continue on another one).
//
// Values: consistency levels are the native protocol's [consistency] codes
// (v4 §3), FROZEN ON THE WIRE. Write types are the names WriteTimeout
// carries (v4 §9).
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tessera::tracing {
class TraceSession;  // tracing/trace_session.h
}

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

// A Paxos round prepared on the replicas of one partition (issue 30;
// Replica::BeginPaxos, tablets/replica.h): a conditional write that holds
// it commits its writes through the round (propose, then commit) instead of
// writing them plainly. Made and read by the replica that prepared it; the
// executor only carries it from BeginPaxos to the write.
struct PaxosRound {
  std::string partition;      // the partition's position (storage-key prefix)
  std::string ballot;         // 16 bytes (cluster/paxos_ballot.h)
  int64_t ballot_micros = 0;  // the ballot's time: what the round writes is timed by it
  ConsistencyLevel serial = ConsistencyLevel::kSerial;  // SERIAL or LOCAL_SERIAL
  // Set by the replica when every replica refused the proposal (a later
  // round won): nothing was written, and the statement starts again.
  bool preempted = false;
};

struct RequestConsistency {
  ConsistencyLevel level = ConsistencyLevel::kOne;
  WriteType write_type = WriteType::kSimple;
  // A conditional write's prepared round (null: an ordinary request); it
  // lives as long as the request.
  PaxosRound* paxos = nullptr;
  // The request's trace (null: not traced): the steps taken for it are
  // recorded there, on whatever thread takes them.
  std::shared_ptr<tracing::TraceSession> trace;
  // A read the replicas do not count as a request they served
  // (cluster/replica_reads.h RangeQuery::internal): a node's own (a split's
  // median, a view or index build), or the partition header lookup that a
  // slice read asks with its first window, which counts the read.
  bool internal = false;
};

// ONE, SIMPLE: the default of Database's calls, and a node's own writes.
inline const RequestConsistency kLocalConsistency{};
// ONE, internal: a node's own reads of its tablets (split medians,
// partition measures, index and view builds).
inline const RequestConsistency kHousekeepingConsistency{.internal = true};
// ALL: what TRUNCATE and repair use (every replica or fail, as Cassandra).
inline const RequestConsistency kAllConsistency{ConsistencyLevel::kAll, WriteType::kSimple};

}  // namespace tessera
