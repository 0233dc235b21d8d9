// Client-side request encoding (native protocol v4 §4.1): the inverse of
// DecodeRequest for the requests a client sends — STARTUP, OPTIONS, QUERY,
// PREPARE, EXECUTE, BATCH. Used by Tessera's own client (src/client) and by
// tests that round-trip requests through DecodeRequest.
//
// QueryParameters flags are derived from the fields that are set (values,
// skip_metadata, page_size, paging_state, serial consistency, default
// timestamp); `flags` is ignored. Values are positional (never named).
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "cql/protocol/frame.h"
#include "cql/protocol/requests.h"

namespace tessera::cql {

struct EncodedRequest {
  Opcode opcode = Opcode::kOptions;
  std::string body;
};

// REQUIRES: `request` is not a RegisterRequest or AuthResponseRequest with no
// meaning for a client (both are encoded anyway, as the spec says).
EncodedRequest EncodeRequest(const Request& request);

// The 9-byte v4 request header followed by `body` (§2); `flags`: the
// header's flags (kFlagTracing asks for a trace; no compression here).
std::string EncodeRequestFrame(int16_t stream, const EncodedRequest& request, uint8_t flags = 0);

}  // namespace tessera::cql
