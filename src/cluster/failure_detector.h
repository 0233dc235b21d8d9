// FailureDetector: each node's own view of which peers are up, from
// heartbeats over the internode channel (issue 29), after ScyllaDB's direct
// failure detector: every `ping_interval_micros` this node pings every
// other member's internode listener; a peer that has not answered for
// `down_after_micros` (2 s by default, the "about 2 s of silence")
// is reported down, and up on the first answer after that. Verdicts go to
// Membership::SetReachable, which turns them into UP / DOWN events and the
// liveness that system.peers, consistency levels and replica choice read.
// etcd plays no part: an etcd stall marks nobody down.
//
// A peer's silence is counted from its last answer, or from when this
// detector first saw it (a member found at start gets a full
// down_after_micros before it can be declared down). Pings run
// asynchronously (InternodeTransport::Ping, deadline down_after_micros), at
// most one in flight per peer, so a silent peer costs one pending call.
//
// Stop is explicit (the destructor calls it): it stops the pinging thread
// and waits until every ping in flight has called back.
//
// Thread safety: Start/Stop from one thread; the rest runs on its thread
// and on gRPC's.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "cluster/internode_transport.h"
#include "cluster/membership.h"
#include "common/periodic_task.h"

namespace tessera::cluster {

struct FailureDetectorOptions {
  int64_t ping_interval_micros = 200'000;
  int64_t down_after_micros = 2'000'000;
};

class FailureDetector {
 public:
  // REQUIRES: membership and client outlive the detector (or its Stop).
  FailureDetector(Membership* membership, InternodeTransport* client, FailureDetectorOptions options);
  ~FailureDetector();  // Stop()
  void Start();
  void Stop();

 private:
  struct Peer {
    int64_t last_heard_micros = 0;  // last answer, or when first seen
    bool ping_in_flight = false;
  };
  void Round();
  void Answered(const std::string& host_id, bool ok);

  Membership* const membership_;
  InternodeTransport* const client_;
  const FailureDetectorOptions options_;
  PeriodicTask task_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::map<std::string, Peer> peers_;  // by host id; guarded by mu_
  int pings_in_flight_ = 0;            // guarded by mu_
};

}  // namespace tessera::cluster
