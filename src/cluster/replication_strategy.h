// Replication strategies and consistency levels: how many replicas a
// keyspace asks for in each data center, and how many of a tablet's
// replicas a request must reach at a consistency level.
//
// Follows Cassandra 4.1: SimpleStrategy (replication_factor, data centers
// ignored) and NetworkTopologyStrategy (a factor per data center; the
// "replication_factor" shorthand applies to every data center);
// ConsistencyLevel.blockFor (QUORUM = sum of factors / 2 + 1, LOCAL_QUORUM
// = local factor / 2 + 1, EACH_QUORUM = a quorum in every data center);
// Unavailable when fewer replicas are alive than a level needs
// (ReplicaPlans.assureSufficientLiveReplicas), before anything is sent.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "tablets/request_consistency.h"

namespace tessera::cluster {

struct ReplicationFactors {
  bool network_topology = false;
  int simple_factor = 0;             // SimpleStrategy
  std::map<std::string, int> per_dc;  // NetworkTopologyStrategy
  // The data centers' factors and `simple_factor`, summed.
  int Total() const;
};

// Parses a keyspace's replication options (class, replication_factor, data
// center names). Errors: InvalidArgument for a factor that is not a
// non-negative integer.
Result<ReplicationFactors> ParseReplication(const std::map<std::string, std::string>& options);

// One replica of a tablet as a request sees it.
struct ReplicaTarget {
  std::string host_id;  // 16 bytes
  std::string data_center;
  bool alive = false;
  bool local = false;   // this node
};

// How many acknowledgements (writes) or answers (reads) `level` needs from
// `replicas`, which are in `local_dc` or elsewhere, and which of them count
// (LOCAL_* levels: the local data center only). Errors: InvalidArgument for
// a level the operation does not take, with Cassandra's message (reads at
// ANY or EACH_QUORUM, writes at SERIAL / LOCAL_SERIAL).
struct ConsistencyPlan {
  int block_for = 1;
  std::vector<bool> counts;  // per replica
};
Result<ConsistencyPlan> PlanConsistency(ConsistencyLevel level, const std::vector<ReplicaTarget>& replicas,
                                        const std::string& local_dc, bool write);

// Unavailable (consistency, required, alive) when fewer counting replicas
// are alive than `plan` needs; EACH_QUORUM checks each data center.
Status CheckAlive(ConsistencyLevel level, const ConsistencyPlan& plan, const std::vector<ReplicaTarget>& replicas);

// Unavailable in Cassandra's words ("Cannot achieve consistency level X"),
// with the level, `required` and `alive` replicas it reports.
Status UnavailableError(ConsistencyLevel level, int required, int alive);

// WriteTimeout or ReadTimeout (`code`) in Cassandra's words: "Operation
// timed out - received only R responses of B required for the write at
// LEVEL", with the level, counts, write type and data_present it reports.
Status ConsistencyTimeout(Status::Code code, const RequestConsistency& consistency, int received, int block_for,
                          bool data_present);

}  // namespace tessera::cluster
