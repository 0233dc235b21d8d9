#include "cql/protocol/segment.h"

#include <lz4.h>
#include <zlib.h>

namespace tessera::cql {
namespace {

constexpr uint32_t kCrc24Init = 0x875060;
constexpr uint32_t kCrc24Polynomial = 0x1974F0B;
constexpr size_t kUncompressedHeader = 3, kCompressedHeader = 5, kCrc24Bytes = 3, kCrc32Bytes = 4;

void PutLittleEndian(uint64_t v, size_t bytes, std::string* out) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t GetLittleEndian(const char* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

void AppendSegment(std::string_view payload, bool self_contained, bool lz4, std::string* out) {
  std::string compressed;
  uint64_t header = 0;
  std::string_view body = payload;
  if (lz4) {
    uint64_t uncompressed_length = 0;  // 0: stored as is
    if (!payload.empty()) {
      compressed.resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(payload.size()))));
      const int n = LZ4_compress_default(payload.data(), compressed.data(), static_cast<int>(payload.size()),
                                         static_cast<int>(compressed.size()));
      if (n > 0 && static_cast<size_t>(n) < payload.size()) {
        compressed.resize(static_cast<size_t>(n));
        body = compressed;
        uncompressed_length = payload.size();
      }
    }
    header = body.size() | (uncompressed_length << 17) | (static_cast<uint64_t>(self_contained) << 34);
    PutLittleEndian(header, kCompressedHeader, out);
    PutLittleEndian(SegmentCrc24(header, kCompressedHeader), kCrc24Bytes, out);
  } else {
    header = body.size() | (static_cast<uint64_t>(self_contained) << 17);
    PutLittleEndian(header, kUncompressedHeader, out);
    PutLittleEndian(SegmentCrc24(header, kUncompressedHeader), kCrc24Bytes, out);
  }
  out->append(body);
  PutLittleEndian(SegmentCrc32(body), kCrc32Bytes, out);
}

}  // namespace

uint32_t SegmentCrc24(uint64_t header_bits, size_t header_bytes) {
  uint32_t crc = kCrc24Init;
  for (size_t i = 0; i < header_bytes; ++i) {
    crc ^= static_cast<uint32_t>(header_bits & 0xFF) << 16;
    header_bits >>= 8;
    for (int bit = 0; bit < 8; ++bit) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= kCrc24Polynomial;
    }
  }
  return crc & 0xFFFFFF;
}

uint32_t SegmentCrc32(std::string_view payload) {
  static const uLong initial = [] {
    const unsigned char kInitialBytes[] = {0xFA, 0x2D, 0x55, 0xCA};
    return crc32(crc32(0L, Z_NULL, 0), kInitialBytes, sizeof kInitialBytes);
  }();
  return static_cast<uint32_t>(
      crc32(initial, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size())));
}

void EncodeSegments(std::string_view envelopes, bool lz4, std::string* out) {
  if (envelopes.size() <= kMaxSegmentPayload) return AppendSegment(envelopes, /*self_contained=*/true, lz4, out);
  for (size_t at = 0; at < envelopes.size(); at += kMaxSegmentPayload) {
    AppendSegment(envelopes.substr(at, kMaxSegmentPayload), /*self_contained=*/false, lz4, out);
  }
}

Status SegmentDecoder::Decode(std::string* raw, std::string* envelopes) {
  const size_t header_bytes = lz4_ ? kCompressedHeader : kUncompressedHeader;
  size_t at = 0;
  Status status;
  while (raw->size() - at >= header_bytes + kCrc24Bytes) {
    const char* p = raw->data() + at;
    const uint64_t header = GetLittleEndian(p, header_bytes);
    const auto header_crc = static_cast<uint32_t>(GetLittleEndian(p + header_bytes, kCrc24Bytes));
    if (header_crc != SegmentCrc24(header, header_bytes)) {
      status = Status::InvalidArgument("CRC mismatch on the header of a v5 frame at byte " + std::to_string(at) +
                                       " of the stream's unread input");
      break;
    }
    const size_t length = header & kMaxSegmentPayload;
    const size_t uncompressed_length = lz4_ ? (header >> 17) & kMaxSegmentPayload : 0;
    const size_t total = header_bytes + kCrc24Bytes + length + kCrc32Bytes;
    if (raw->size() - at < total) break;  // the rest has not arrived yet
    std::string_view payload(p + header_bytes + kCrc24Bytes, length);
    const auto payload_crc = static_cast<uint32_t>(GetLittleEndian(payload.data() + length, kCrc32Bytes));
    if (payload_crc != SegmentCrc32(payload)) {
      status = Status::InvalidArgument("CRC mismatch on the payload of a v5 frame of " + std::to_string(length) +
                                       " bytes");
      break;
    }
    if (uncompressed_length == 0) {
      envelopes->append(payload);
    } else {
      const size_t before = envelopes->size();
      envelopes->resize(before + uncompressed_length);
      const int n = LZ4_decompress_safe(payload.data(), envelopes->data() + before, static_cast<int>(length),
                                        static_cast<int>(uncompressed_length));
      if (n < 0 || static_cast<size_t>(n) != uncompressed_length) {
        envelopes->resize(before);
        status = Status::InvalidArgument("corrupt LZ4 payload in a v5 frame");
        break;
      }
    }
    at += total;
  }
  raw->erase(0, at);
  return status;
}

}  // namespace tessera::cql
