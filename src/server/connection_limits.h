// Bounds on a CQL listener's clients, after Cassandra's
// native_transport_max_concurrent_connections(_per_ip) and the in-flight
// request limits: connections beyond a bound are closed as soon as they are
// accepted (Cassandra's ConnectionLimitHandler), and requests beyond a bound
// are answered Overloaded 0x1001 without being run.
//
// Thread safety: ConnectionLimiter is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace tessera::server {

struct ConnectionLimits {
  size_t max_connections = 0;              // in total; 0: no bound (Cassandra's -1)
  size_t max_connections_per_address = 0;  // per client IP address; 0: no bound
  // Requests received on one connection and not yet answered; past it, Overloaded.
  size_t max_requests_per_connection = 1024;
  // The same over every connection of the listener.
  size_t max_requests_in_flight = 8192;
};

class ConnectionLimiter {
 public:
  explicit ConnectionLimiter(ConnectionLimits limits) : limits_(limits) {}
  // Counts a new connection from `address`; false (and nothing counted) when
  // a bound is reached, with the reason in *why.
  bool Admit(const std::string& address, std::string* why);
  // A connection Admit counted has closed.
  void Release(const std::string& address);

 private:
  const ConnectionLimits limits_;
  std::mutex mu_;
  size_t total_ = 0;
  std::map<std::string, size_t> per_address_;
};

}  // namespace tessera::server
