#include "common/uuid.h"

#include <random>

#include "common/bytes.h"

namespace tessera {

std::string RandomUuidV4() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string u(16, '\0');
  for (int i = 0; i < 16; i += 8) {
    const uint64_t r = rng();
    for (int k = 0; k < 8; ++k) u[static_cast<size_t>(i + k)] = static_cast<char>(r >> (8 * k));
  }
  u[6] = static_cast<char>((u[6] & 0x0F) | 0x40);
  u[8] = static_cast<char>((u[8] & 0x3F) | 0x80);
  return u;
}

std::string UuidText(std::string_view bytes) {
  const std::string h = ToHex(bytes);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

Result<std::string> UuidFromText(std::string_view text) {
  const auto invalid = [&] { return Status::InvalidArgument("not a uuid: " + std::string(text.substr(0, 64))); };
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-') return invalid();
  std::string hex;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i != 8 && i != 13 && i != 18 && i != 23) hex.push_back(text[i]);
  }
  std::string bytes;
  if (!FromHex(hex, &bytes) || bytes.size() != 16) return invalid();
  return bytes;
}

}  // namespace tessera
