#include "server/connection_limits.h"

namespace tessera::server {

bool ConnectionLimiter::Admit(const std::string& address, std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (limits_.max_connections && total_ >= limits_.max_connections) {
    *why = "Exceeded maximum native connection limit of " + std::to_string(limits_.max_connections);
    return false;
  }
  size_t& mine = per_address_[address];
  if (limits_.max_connections_per_address && mine >= limits_.max_connections_per_address) {
    *why = "Exceeded maximum native connection limit per address of " +
           std::to_string(limits_.max_connections_per_address) + " from " + address;
    if (mine == 0) per_address_.erase(address);
    return false;
  }
  ++mine;
  ++total_;
  return true;
}

void ConnectionLimiter::Release(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  --total_;
  auto it = per_address_.find(address);
  if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
}

}  // namespace tessera::server
