#include "workload/token_ring.h"

#include <arpa/inet.h>

#include <algorithm>
#include <string_view>


namespace tessera::workload {
namespace {

uint32_t Be32(std::string_view b, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(b[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(b[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(b[at + 2])) << 8) | static_cast<uint8_t>(b[at + 3]);
}

// A serialized set<text> (native protocol v4 §6: [int] count, then [int]-length elements).
Result<std::vector<int64_t>> DecodeTokens(const std::optional<std::string>& cell) {
  std::vector<int64_t> tokens;
  if (!cell) return tokens;
  const std::string& b = *cell;
  if (b.size() < 4) return Status::Corruption("tokens: short set");
  const uint32_t n = Be32(b, 0);
  size_t at = 4;
  for (uint32_t i = 0; i < n; ++i) {
    if (at + 4 > b.size()) return Status::Corruption("tokens: short element");
    const uint32_t len = Be32(b, at);
    at += 4;
    if (at + len > b.size()) return Status::Corruption("tokens: element past the end");
    try {
      tokens.push_back(std::stoll(b.substr(at, len)));
    } catch (const std::exception&) {
      return Status::Corruption("tokens: not a Murmur3 token: " + b.substr(at, len));
    }
    at += len;
  }
  return tokens;
}

Result<std::string> DecodeInet(const std::optional<std::string>& cell) {
  if (!cell || (cell->size() != 4 && cell->size() != 16)) return Status::Corruption("peers: bad rpc_address");
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(cell->size() == 4 ? AF_INET : AF_INET6, cell->data(), text, sizeof text) == nullptr) {
    return Status::Corruption("peers: bad rpc_address");
  }
  return std::string(text);
}

}  // namespace

Result<TokenRing> TokenRing::Read(client::CqlConnection& conn, const std::string& connected_address) {
  TokenRing ring;
  TESSERA_ASSIGN_OR_RETURN(auto local, conn.Query("SELECT tokens FROM system.local"));
  for (const auto& row : local.rows.rows) {
    if (row.empty()) continue;
    TESSERA_ASSIGN_OR_RETURN(auto tokens, DecodeTokens(row[0]));
    for (int64_t t : tokens) ring.owners_[t] = connected_address;
  }
  TESSERA_ASSIGN_OR_RETURN(auto peers, conn.Query("SELECT rpc_address, tokens FROM system.peers"));
  for (const auto& row : peers.rows.rows) {
    if (row.size() < 2) continue;
    TESSERA_ASSIGN_OR_RETURN(std::string address, DecodeInet(row[0]));
    TESSERA_ASSIGN_OR_RETURN(auto tokens, DecodeTokens(row[1]));
    for (int64_t t : tokens) ring.owners_[t] = address;
  }
  return ring;
}

const std::string& TokenRing::Owner(int64_t token) const {
  auto it = owners_.lower_bound(token);
  return it == owners_.end() ? owners_.begin()->second : it->second;
}

std::vector<std::string> TokenRing::Replicas(int64_t token, int count) const {
  std::vector<std::string> replicas;
  auto it = owners_.lower_bound(token);
  for (size_t seen = 0; seen < owners_.size() && static_cast<int>(replicas.size()) < count; ++seen, ++it) {
    if (it == owners_.end()) it = owners_.begin();
    if (std::find(replicas.begin(), replicas.end(), it->second) == replicas.end()) replicas.push_back(it->second);
  }
  return replicas;
}

}  // namespace tessera::workload
