#include "tools/served_load.h"

#include <httplib.h>

#include <cstdlib>
#include <sstream>

namespace tessera {

std::map<std::string, ServedTotals> ParseServedTotals(const std::string& exposition, const std::string& keyspace) {
  std::map<std::string, ServedTotals> out;
  const std::string labels = "{keyspace=\"" + keyspace + "\",table=\"";
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    bool write = false;
    size_t at = 0;
    for (const auto& [name, is_write] : {std::pair{"tessera_table_replica_reads_total", false},
                                         std::pair{"tessera_table_replica_writes_total", true}}) {
      const std::string prefix = std::string(name) + labels;
      if (line.rfind(prefix, 0) == 0) {
        write = is_write;
        at = prefix.size();
      }
    }
    if (at == 0) continue;
    const size_t close = line.find("\"} ", at);
    if (close == std::string::npos) continue;
    const auto value = static_cast<uint64_t>(std::strtod(line.c_str() + close + 3, nullptr));
    auto& totals = out[line.substr(at, close - at)];
    (write ? totals.writes : totals.reads) = value;
  }
  return out;
}

Result<std::map<std::string, ServedTotals>> ReadServedTotals(const std::string& address, int admin_port,
                                                             const std::string& keyspace, int timeout_ms) {
  httplib::Client http(address, admin_port);
  http.set_connection_timeout(0, timeout_ms * 1000);
  http.set_read_timeout(0, timeout_ms * 1000);
  auto res = http.Get("/metrics");
  if (!res) return Status::IOError("no answer from " + address + ":" + std::to_string(admin_port) + "/metrics");
  if (res->status != 200) {
    return Status::IOError(address + ":" + std::to_string(admin_port) + "/metrics answered " +
                           std::to_string(res->status));
  }
  return ParseServedTotals(res->body, keyspace);
}

}  // namespace tessera
