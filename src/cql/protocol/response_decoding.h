// Client-side response decoding (native protocol v4 §4.2): the inverse of
// responses.h for what a client receives — ERROR, READY, AUTHENTICATE, AUTH_SUCCESS, SUPPORTED, RESULT
// (Void, Rows, Set_keyspace, Prepared, Schema_change) and EVENT — plus the
// warnings a response carries when its header has the Warning flag (§2.2).
// Used by Tessera's client (src/client): the loader, the shell, the demo.
//
// Errors: Corruption naming the byte offset when a body is malformed or
// uses a type Tessera does not know (custom and user-defined types).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "cql/protocol/frame.h"
#include "cql/protocol/responses.h"

namespace tessera::cql {

struct DecodedRows {
  std::vector<ColumnSpec> columns;                         // empty when No_metadata was set
  std::optional<std::string> paging_state;                 // set: more pages follow
  std::vector<std::vector<std::optional<std::string>>> rows;  // serialized cells, nullopt = null
};

struct DecodedPrepared {
  std::string id;
  std::vector<ColumnSpec> bind_columns;
  std::vector<uint16_t> partition_key_indexes;
  std::vector<ColumnSpec> result_columns;
};

struct DecodedResponse {
  Opcode opcode = Opcode::kError;
  std::vector<std::string> warnings;
  std::string tracing_id;  // 16 bytes with the Tracing flag (§2.2), else empty
  // ERROR
  int32_t error_code = 0;
  std::string error_message;
  // RESULT
  int32_t result_kind = 0;  // kResultVoid ... kResultSchemaChange (responses.h)
  DecodedRows rows;
  DecodedPrepared prepared;
  std::string keyspace;        // Set_keyspace
  std::string authenticator;   // AUTHENTICATE: the server's authenticator class
  SchemaChange schema_change;  // Schema_change result or SCHEMA_CHANGE event
  bool is_error() const { return opcode == Opcode::kError; }
};

// `flags` are the frame header's flags (Warning, Tracing); compression must
// already be undone.
Result<DecodedResponse> DecodeResponse(uint8_t opcode, uint8_t flags, std::string_view body);

// A [option] type (§4.2.5.2). Errors: Corruption.
Result<CqlType> DecodeTypeOption(WireReader* reader);

}  // namespace tessera::cql
