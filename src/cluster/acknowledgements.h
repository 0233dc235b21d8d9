// Waiting for every live member to acknowledge a change: the barrier of a
// migration stage (/tessera/placement_acks/, cluster/tablet_map_sync.h) and
// of a repair's tombstone holds (/tessera/repair_hold_acks/,
// cluster/repair_holds.h). Each node puts `prefix` + its host id text = the
// newest etcd revision it applied (decimal) once it applied it.
//
// Thread safety: thread-safe (etcd and the membership view are).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tessera::cluster {

class Membership;

// Polls every 20 ms until every member alive in `membership` acknowledged
// at least `revision` under `prefix` (a node that is down acknowledges
// nothing and is not waited for). Returns the microseconds it waited.
// Errors: etcd's; Busy naming a node still behind after timeout_micros.
Result<int64_t> AwaitAcknowledgements(Membership* membership, const std::string& prefix, int64_t revision,
                                      int64_t timeout_micros);

}  // namespace tessera::cluster
