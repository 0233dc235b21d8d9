// Repair (nodetool repair, row-level in the manner of ScyllaDB's, per
// tablet): compares the replicas of every tablet of the chosen tables by
// digest and, where the digests differ, reads the tablet's whole key range
// at ALL through this node, whose blocking read repair
// (cluster/replicated_tablet.h) writes every key's reconciled value to the
// replicas that held something else; then compares digests again. Digests
// cover every key of the tablet and its stored value, tombstones included
// (replica_reads.h: DigestLocal), so equal digests mean identical replicas.
//
// A tablet with a replica down is not repaired (Cassandra's repair fails
// likewise); its entry says which replica and why.
//
// Before the first digest every live node holds the chosen tables'
// tombstones from purging until the repair ends (cluster/repair_holds.h);
// then the failpoint "repair.held" is hit (common/failpoints.h).
//
// Thread safety: thread-safe; runs on the caller's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/replica_reads.h"
#include "cluster/replicated_tablet.h"

namespace tessera::cluster {

struct TabletRepair {
  std::string keyspace, table;
  std::string start, end;              // table-relative bounds ("" end: the table's end)
  std::vector<std::string> replicas;   // host ids (16 bytes)
  std::vector<RangeDigest> before;     // per replica, in `replicas` order
  std::vector<RangeDigest> after;      // empty unless the tablet was repaired
  bool repaired = false;               // the digests differed and the range was read at ALL
  bool consistent = false;             // every replica's final digest equal
  uint64_t keys_written = 0;           // keys read repair wrote while this tablet was read
  std::string error;                   // set: not compared or not repaired
};

struct RepairReport {
  std::vector<TabletRepair> tablets;
  int consistent = 0, repaired = 0, failed = 0;
};

// Repairs the tables of `keyspace` (every replicated keyspace when empty),
// only `table` when set. Errors: NotFound for an unknown keyspace or table;
// Busy when the holds could not be placed or acknowledged ("repair not
// started"); per-tablet failures are reported in the entries, not as an error.
Result<RepairReport> RepairTables(ReplicationServices* services, const std::string& keyspace,
                                  const std::string& table);

// The report as JSON: {"tablets": [{keyspace, table, start, end (hex),
// replicas: [{host_id, digest (16 hex digits), keys}], repaired, consistent,
// keys_written, after: [...], error}], "consistent", "repaired", "failed"}.
std::string RepairReportJson(const RepairReport& report);

}  // namespace tessera::cluster
