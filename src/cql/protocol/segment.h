// The outer framing of native protocol v5 (native_protocol_v5.spec §2): after
// the STARTUP handshake, a v5 connection carries its envelopes (the v4-style
// frames of frame.h) inside checksummed frames, called segments here as the
// drivers call them, so as not to confuse them with v4 frames.
//
// Uncompressed segment (§2.1): a 3-byte little-endian header (payload length,
// 17 bits; self-contained flag, bit 17), the CRC24 of those 3 bytes (3 bytes,
// little-endian), the payload (at most kMaxSegmentPayload bytes), and the
// CRC32 of the payload (4 bytes, little-endian).
// LZ4 segment (§2.2, as Cassandra and the drivers lay it out): a 5-byte
// header (compressed length, 17 bits; uncompressed length, 17 bits, 0 when
// the payload is stored uncompressed; self-contained flag, bit 34), its CRC24
// (3 bytes), the payload as a raw LZ4 block, and the CRC32 of that payload.
// CRC24: initial value 0x875060, polynomial 0x1974F0B, over the header bytes.
// CRC32: zlib's CRC-32, started on the bytes FA 2D 55 CA (Cassandra's
// Crc.CRC32 initial bytes), so that an empty payload does not check as 0.
// All these values are FROZEN ON THE WIRE.
//
// A self-contained segment holds one or more whole envelopes; an envelope
// longer than one payload is sent as a run of segments that are not
// self-contained, in order.
//
// Thread safety: pure functions; a SegmentDecoder is used by one connection
// at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::cql {

constexpr size_t kMaxSegmentPayload = (1u << 17) - 1;  // 131,071 bytes

uint32_t SegmentCrc24(uint64_t header_bits, size_t header_bytes);
// CRC32 with the v5 initial bytes, as above.
uint32_t SegmentCrc32(std::string_view payload);

// Appends `envelopes` (one or more whole envelopes) to `out` as segments:
// one self-contained segment when they fit in one payload, else a run of
// segments that are not self-contained. With `lz4`, a payload is compressed
// when that makes it smaller.
void EncodeSegments(std::string_view envelopes, bool lz4, std::string* out);

class SegmentDecoder {
 public:
  explicit SegmentDecoder(bool lz4) : lz4_(lz4) {}
  // Takes every complete segment from the front of `*raw` (erasing it) and
  // appends its payload to `*envelopes`. Incomplete trailing bytes stay in
  // `*raw` for the next call. Errors (InvalidArgument, naming what failed):
  // a header or payload CRC mismatch, a corrupt LZ4 payload; the stream is
  // then unusable and the connection must be closed.
  [[nodiscard]] Status Decode(std::string* raw, std::string* envelopes);

 private:
  bool lz4_;
};

}  // namespace tessera::cql
