#include "cluster/acknowledgements.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "cluster/etcd_client.h"
#include "cluster/membership.h"
#include "common/uuid.h"

namespace tessera::cluster {

Result<int64_t> AwaitAcknowledgements(Membership* membership, const std::string& prefix, int64_t revision,
                                      int64_t timeout_micros) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::microseconds(timeout_micros);
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(EtcdRangeResult acks, membership->etcd().Range(prefix, EtcdPrefixEnd(prefix)));
    std::map<std::string, int64_t> acked;  // by host id text
    for (const auto& kv : acks.kvs) acked[kv.key.substr(prefix.size())] = std::atoll(kv.value.c_str());
    std::string behind;
    for (const auto& m : membership->Members()) {
      if (m.alive && acked[UuidText(m.record.host_id)] < revision) behind = m.record.address;
    }
    if (behind.empty()) {
      return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    }
    if (Clock::now() > deadline) {
      return Status::Busy("node " + behind + " did not acknowledge revision " + std::to_string(revision) + " of " +
                          prefix);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace tessera::cluster
