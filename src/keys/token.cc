#include "keys/token.h"

#include "common/bytes.h"
#include "keys/murmur3.h"

namespace tessera {

std::string RoutingKey(const std::vector<std::string_view>& parts) {
  if (parts.size() == 1) return std::string(parts[0]);
  std::string out;
  for (auto p : parts) {
    PutBigEndian16(&out, static_cast<uint16_t>(p.size()));
    out.append(p);
    out.push_back('\0');
  }
  return out;
}

Token TokenOfRoutingKey(std::string_view routing_key) {
  Token t = CassandraMurmur3(routing_key).h1;
  return t == kMinToken ? kMaxToken : t;
}

Token TokenOfPartitionKey(const std::vector<std::string_view>& parts) {
  if (parts.size() == 1) return TokenOfRoutingKey(parts[0]);
  return TokenOfRoutingKey(RoutingKey(parts));
}

}  // namespace tessera
