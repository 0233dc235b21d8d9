#include "cql/protocol/compression.h"

#include <lz4.h>
#include <snappy.h>

#include <algorithm>
#include <cctype>

#include "common/bytes.h"

namespace tessera::cql {

Result<Compression> ParseCompression(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "lz4") return Compression::kLz4;
  if (lower == "snappy") return Compression::kSnappy;
  return Status::InvalidArgument("unsupported compression '" + std::string(name) + "' (supported: lz4, snappy)");
}

Status Compress(Compression algorithm, std::string_view in, std::string* out) {
  out->clear();
  switch (algorithm) {
    case Compression::kNone:
      out->assign(in);
      return Status::OK();
    case Compression::kLz4: {
      PutBigEndian32(out, static_cast<uint32_t>(in.size()));
      int bound = LZ4_compressBound(static_cast<int>(in.size()));
      out->resize(4 + static_cast<size_t>(bound));
      int n = LZ4_compress_default(in.data(), out->data() + 4, static_cast<int>(in.size()), bound);
      if (n <= 0 && !in.empty()) return Status::InvalidArgument("lz4 compression failed");
      out->resize(4 + static_cast<size_t>(std::max(n, 0)));
      return Status::OK();
    }
    case Compression::kSnappy:
      snappy::Compress(in.data(), in.size(), out);
      return Status::OK();
  }
  return Status::InvalidArgument("unknown compression");
}

Status Decompress(Compression algorithm, std::string_view in, size_t max_size, std::string* out) {
  out->clear();
  switch (algorithm) {
    case Compression::kNone:
      out->assign(in);
      return Status::OK();
    case Compression::kLz4: {
      if (in.size() < 4) return Status::InvalidArgument("lz4 body shorter than its length prefix");
      uint32_t n = GetBigEndian32(in.data());
      if (n > max_size) return Status::InvalidArgument("lz4 body expands beyond the frame size limit");
      out->resize(n);
      int got = LZ4_decompress_safe(in.data() + 4, out->data(), static_cast<int>(in.size() - 4), static_cast<int>(n));
      if (got < 0 || static_cast<uint32_t>(got) != n) return Status::InvalidArgument("corrupt lz4 body");
      return Status::OK();
    }
    case Compression::kSnappy: {
      size_t n;
      if (!snappy::GetUncompressedLength(in.data(), in.size(), &n)) return Status::InvalidArgument("corrupt snappy body");
      if (n > max_size) return Status::InvalidArgument("snappy body expands beyond the frame size limit");
      if (!snappy::Uncompress(in.data(), in.size(), out)) return Status::InvalidArgument("corrupt snappy body");
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown compression");
}

}  // namespace tessera::cql
