// libFuzzer target: the native protocol frame decoder as the server runs it.
// Byte 0 picks the compression (none / LZ4 / Snappy) and whether the input is
// a v5 connection after STARTUP: checksummed frames (segment.h, LZ4 ones
// when LZ4 is picked) whose payloads are the envelopes. Then each envelope's
// header check, optional v4 decompression, and the request decoder for its
// opcode and version. Properties: no crash, no hang, no allocation beyond
// the frame limit, and every accepted body decodes the same way twice.
// A third mode checks the framing's round trip: the input framed by
// EncodeSegments decodes back to itself, in one piece or fed in two.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cql/protocol/compression.h"
#include "cql/protocol/frame.h"
#include "cql/protocol/requests.h"
#include "cql/protocol/segment.h"

using namespace tessera::cql;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Compression compression = static_cast<Compression>(data[0] % 3);
  const bool framed = (data[0] / 3) % 2 == 1;
  std::string raw(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] / 6) % 2 == 1) {
    const bool lz4 = compression == Compression::kLz4;
    std::string frames;
    EncodeSegments(raw, lz4, &frames);
    const size_t cut = raw.empty() ? 0 : static_cast<uint8_t>(raw[0]) % frames.size();
    SegmentDecoder decoder(lz4);
    std::string first = frames.substr(0, cut), rest = frames.substr(cut), back;
    if (!decoder.Decode(&first, &back).ok()) abort();
    rest = first + rest;
    if (!decoder.Decode(&rest, &back).ok() || !rest.empty() || back != raw) abort();
    return 0;
  }
  std::string envelopes;
  if (framed) {
    // What decodes before a checksum mismatch is processed, as on a connection.
    (void)SegmentDecoder(compression == Compression::kLz4).Decode(&raw, &envelopes);
  }
  std::string_view input = framed ? std::string_view(envelopes) : std::string_view(raw);
  // Several frames back to back, as they arrive on a connection.
  while (!input.empty()) {
    FrameHeader h;
    HeaderCheck check = ParseFrameHeader(input, &h);
    if (check != HeaderCheck::kOk) return 0;
    std::string_view body = input.substr(kFrameHeaderSize);
    if (body.size() < h.length) return 0;  // waits for more bytes
    body = body.substr(0, h.length);
    input.remove_prefix(kFrameHeaderSize + h.length);
    std::string plain(body);
    if ((h.flags & kFlagCompression) && h.version < kProtocolV5) {
      if (!Decompress(compression, body, 1 << 20, &plain).ok()) continue;
    }
    auto first = DecodeRequest(h.opcode, plain, h.version);
    auto second = DecodeRequest(h.opcode, plain, h.version);
    if (first.ok() != second.ok()) abort();
    if (first.ok() && first->index() != second->index()) abort();
  }
  return 0;
}
