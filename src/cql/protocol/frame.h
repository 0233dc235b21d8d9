// CQL native protocol frames (native_protocol_v4.spec §2), which v5 calls
// envelopes (native_protocol_v5.spec §2.4): a 9-byte header
//   version (1 byte; 0x04 or 0x05 request, 0x84 or 0x85 response), flags (1),
//   stream (2, signed), opcode (1), length (4, body bytes)
// followed by the body. On a v5 connection, once STARTUP is answered,
// envelopes travel inside checksummed frames (segment.h). Versions, opcodes
// and flag bits are FROZEN ON THE WIRE.
//
// Thread safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::cql {

constexpr uint8_t kProtocolV4 = 0x04;
constexpr uint8_t kProtocolV5 = 0x05;
constexpr uint8_t kResponseBit = 0x80;
constexpr size_t kFrameHeaderSize = 9;
constexpr uint32_t kMaxFrameBodySize = 256u << 20;  // Cassandra's native_transport_max_frame_size

enum class Opcode : uint8_t {
  kError = 0x00,
  kStartup = 0x01,
  kReady = 0x02,
  kAuthenticate = 0x03,
  kOptions = 0x05,
  kSupported = 0x06,
  kQuery = 0x07,
  kResult = 0x08,
  kPrepare = 0x09,
  kExecute = 0x0A,
  kRegister = 0x0B,
  kEvent = 0x0C,
  kBatch = 0x0D,
  kAuthChallenge = 0x0E,
  kAuthResponse = 0x0F,
  kAuthSuccess = 0x10,
};

// Header flags (§2.2).
constexpr uint8_t kFlagCompression = 0x01;
constexpr uint8_t kFlagTracing = 0x02;
constexpr uint8_t kFlagCustomPayload = 0x04;
constexpr uint8_t kFlagWarning = 0x08;
constexpr uint8_t kFlagUseBeta = 0x10;  // v5 (§2.4.1.2): v5 is not beta here, so it is accepted and ignored

struct FrameHeader {
  uint8_t version = kProtocolV4;  // without the response bit
  bool is_response = false;
  uint8_t flags = 0;
  int16_t stream = 0;
  uint8_t opcode = 0;
  uint32_t length = 0;
};

enum class HeaderCheck {
  kNeedMore,        // fewer than 9 bytes buffered
  kOk,              // header parsed; the body follows
  kBadVersion,      // a version other than 4 and 5, or a response: answer ERROR 0x000A on the same stream, then close
  kTooLarge,        // body length over kMaxFrameBodySize: protocol error, close
};

// Parses the header at the front of `buffer`. The header is filled in for
// kOk, kBadVersion (so the error can echo the stream) and kTooLarge.
HeaderCheck ParseFrameHeader(std::string_view buffer, FrameHeader* header);

// Appends a 9-byte header for a response frame of protocol `version` (4 or 5).
void EncodeResponseHeader(uint8_t version, uint8_t flags, int16_t stream, Opcode opcode, uint32_t length,
                          std::string* out);

const char* OpcodeName(uint8_t opcode);

}  // namespace tessera::cql
