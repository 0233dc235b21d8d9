#include "tablets/request_consistency.h"

namespace tessera {
const char* ConsistencyLevelName(ConsistencyLevel level) {
  switch (level) {
    case ConsistencyLevel::kAny: return "ANY";
    case ConsistencyLevel::kOne: return "ONE";
    case ConsistencyLevel::kTwo: return "TWO";
    case ConsistencyLevel::kThree: return "THREE";
    case ConsistencyLevel::kQuorum: return "QUORUM";
    case ConsistencyLevel::kAll: return "ALL";
    case ConsistencyLevel::kLocalQuorum: return "LOCAL_QUORUM";
    case ConsistencyLevel::kEachQuorum: return "EACH_QUORUM";
    case ConsistencyLevel::kSerial: return "SERIAL";
    case ConsistencyLevel::kLocalSerial: return "LOCAL_SERIAL";
    case ConsistencyLevel::kLocalOne: return "LOCAL_ONE";
  }
  return "UNKNOWN";
}

const char* WriteTypeName(WriteType type) {
  switch (type) {
    case WriteType::kSimple: return "SIMPLE";
    case WriteType::kBatch: return "BATCH";
    case WriteType::kUnloggedBatch: return "UNLOGGED_BATCH";
    case WriteType::kCounter: return "COUNTER";
    case WriteType::kCas: return "CAS";
  }
  return "SIMPLE";
}

}  // namespace tessera
