// Request messages of native protocol v4 (§4.1) and v5 (v5 §4.1) and their
// decoding. v5 widens the QUERY, EXECUTE and BATCH flags to an [int], adds
// a keyspace and now_in_seconds to them, flags and a keyspace to PREPARE, and
// the result metadata id to EXECUTE (v5 §9).
//
// DecodeRequest parses a whole frame body; any malformed body (short,
// negative lengths where they are not allowed, trailing bytes, unknown batch
// kinds) is an InvalidArgument whose message names the offending byte offset;
// the server answers it with a Protocol error (0x000A) on the same stream.
//
// Thread safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "cql/protocol/wire.h"

namespace tessera::cql {

// [consistency] values (§3). FROZEN ON THE WIRE.
enum class Consistency : uint16_t {
  kAny = 0x0000, kOne = 0x0001, kTwo = 0x0002, kThree = 0x0003, kQuorum = 0x0004, kAll = 0x0005,
  kLocalQuorum = 0x0006, kEachQuorum = 0x0007, kSerial = 0x0008, kLocalSerial = 0x0009, kLocalOne = 0x000A,
};
const char* ConsistencyName(Consistency c);
// The level a name (any case) spells, e.g. "quorum"; nullopt for another word.
std::optional<Consistency> ConsistencyFromName(std::string_view name);

// <query_parameters> of QUERY and EXECUTE (§4.1.4). Flag bits FROZEN ON THE WIRE.
struct QueryParameters {
  static constexpr uint32_t kValues = 0x01, kSkipMetadata = 0x02, kPageSize = 0x04, kPagingState = 0x08,
                            kSerialConsistency = 0x10, kDefaultTimestamp = 0x20, kNamesForValues = 0x40,
                            kKeyspace = 0x80, kNowInSeconds = 0x100;  // the last two: v5 only
  Consistency consistency = Consistency::kOne;
  uint32_t flags = 0;  // a [byte] in v4, an [int] in v5
  std::vector<WireValue> values;
  std::vector<std::string> value_names;  // with kNamesForValues: one per value
  bool skip_metadata = false;
  std::optional<int32_t> page_size;      // rows; <= 0 means no paging
  std::optional<std::string> paging_state;
  std::optional<Consistency> serial_consistency;
  std::optional<int64_t> default_timestamp;  // microseconds
  // v5: the keyspace the statement runs in instead of the connection's.
  std::optional<std::string> keyspace;
  // v5: "now" for the query, in seconds (meant for tests, §4.1.4). Read and
  // accepted, not applied: expiry and deletion times use the node's clock.
  std::optional<int32_t> now_in_seconds;
};

struct StartupRequest { std::map<std::string, std::string> options; };
struct OptionsRequest {};
struct QueryRequest { std::string query; QueryParameters params; };
struct PrepareRequest {
  std::string query;
  std::optional<std::string> keyspace;  // v5 (§4.1.5)
};
struct ExecuteRequest {
  std::string id;
  QueryParameters params;
  std::optional<std::string> result_metadata_id;  // v5 (§4.1.6; on the wire before params): what the client decodes rows with
};
struct BatchEntry {
  bool prepared = false;
  std::string query_or_id;  // CQL text, or a prepared id
  std::vector<WireValue> values;
  std::vector<std::string> value_names;
};
struct BatchRequest {
  enum Type : uint8_t { kLogged = 0, kUnlogged = 1, kCounter = 2 };
  Type type = kLogged;
  std::vector<BatchEntry> statements;
  Consistency consistency = Consistency::kOne;
  uint32_t flags = 0;  // a [byte] in v4, an [int] in v5
  std::optional<Consistency> serial_consistency;
  std::optional<int64_t> default_timestamp;
  std::optional<std::string> keyspace;    // v5
  std::optional<int32_t> now_in_seconds;  // v5, as QueryParameters'
};
struct RegisterRequest { std::vector<std::string> event_types; };
struct AuthResponseRequest { std::optional<std::string> token; };

using Request = std::variant<StartupRequest, OptionsRequest, QueryRequest, PrepareRequest, ExecuteRequest,
                             BatchRequest, RegisterRequest, AuthResponseRequest>;

// Decodes a request body of protocol `version` (kProtocolV4 or kProtocolV5).
// Errors: InvalidArgument ("<what> at byte N" / "unknown opcode") for a
// malformed body or an opcode that is not a request.
Result<Request> DecodeRequest(uint8_t opcode, std::string_view body, uint8_t version);

}  // namespace tessera::cql
