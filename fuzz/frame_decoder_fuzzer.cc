// libFuzzer target: the native protocol v4 frame decoder as the server runs
// it: header check, optional decompression (byte 0 picks none / LZ4 /
// Snappy), then the request decoder for the frame's opcode. Properties: no
// crash, no hang, no allocation beyond the frame limit, and every accepted
// body decodes the same way twice.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cql/protocol/compression.h"
#include "cql/protocol/frame.h"
#include "cql/protocol/requests.h"

using namespace tessera::cql;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Compression compression = static_cast<Compression>(data[0] % 3);
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
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
    if (h.flags & kFlagCompression) {
      if (!Decompress(compression, body, 1 << 20, &plain).ok()) continue;
    }
    auto first = DecodeRequest(h.opcode, plain);
    auto second = DecodeRequest(h.opcode, plain);
    if (first.ok() != second.ok()) abort();
    if (first.ok() && first->index() != second->index()) abort();
  }
  return 0;
}
