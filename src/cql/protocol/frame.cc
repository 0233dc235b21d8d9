#include "cql/protocol/frame.h"

#include "common/bytes.h"

namespace tessera::cql {

HeaderCheck ParseFrameHeader(std::string_view buffer, FrameHeader* h) {
  if (buffer.size() < kFrameHeaderSize) return HeaderCheck::kNeedMore;
  auto version_byte = static_cast<uint8_t>(buffer[0]);
  h->is_response = version_byte & kResponseBit;
  h->version = version_byte & ~kResponseBit;
  h->flags = static_cast<uint8_t>(buffer[1]);
  h->stream = static_cast<int16_t>(GetBigEndian16(buffer.data() + 2));
  h->opcode = static_cast<uint8_t>(buffer[4]);
  h->length = GetBigEndian32(buffer.data() + 5);
  if ((h->version != kProtocolV4 && h->version != kProtocolV5) || h->is_response) return HeaderCheck::kBadVersion;
  if (h->length > kMaxFrameBodySize) return HeaderCheck::kTooLarge;
  return HeaderCheck::kOk;
}

void EncodeResponseHeader(uint8_t version, uint8_t flags, int16_t stream, Opcode opcode, uint32_t length,
                          std::string* out) {
  out->push_back(static_cast<char>(version | kResponseBit));
  out->push_back(static_cast<char>(flags));
  PutBigEndian16(out, static_cast<uint16_t>(stream));
  out->push_back(static_cast<char>(opcode));
  PutBigEndian32(out, length);
}

const char* OpcodeName(uint8_t opcode) {
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::kError: return "ERROR";
    case Opcode::kStartup: return "STARTUP";
    case Opcode::kReady: return "READY";
    case Opcode::kAuthenticate: return "AUTHENTICATE";
    case Opcode::kOptions: return "OPTIONS";
    case Opcode::kSupported: return "SUPPORTED";
    case Opcode::kQuery: return "QUERY";
    case Opcode::kResult: return "RESULT";
    case Opcode::kPrepare: return "PREPARE";
    case Opcode::kExecute: return "EXECUTE";
    case Opcode::kRegister: return "REGISTER";
    case Opcode::kEvent: return "EVENT";
    case Opcode::kBatch: return "BATCH";
    case Opcode::kAuthChallenge: return "AUTH_CHALLENGE";
    case Opcode::kAuthResponse: return "AUTH_RESPONSE";
    case Opcode::kAuthSuccess: return "AUTH_SUCCESS";
  }
  return "UNKNOWN";
}

}  // namespace tessera::cql
