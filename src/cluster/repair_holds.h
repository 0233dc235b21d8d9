// Repair holds: while a node repairs tables (cluster/repair.h), no node
// purges those tables' tombstones, however far past gc_grace. A replica
// that missed a delete receives its tombstone from the repair; had another
// replica purged its copy first, the repair would find the deleted row
// live on one replica and nothing on the other, and bring it back.
//
// etcd keys (FROZEN: nodes of different releases read them):
//   /tessera/repair_holds/<host id text> = JSON array of the uuid texts of
//       the tables that node is repairing; bound to a lease it keeps alive,
//       so a repairer that dies releases its holds when the lease expires;
//   /tessera/repair_hold_acks/<host id text> = the newest mod_revision of
//       the holds this node applied (decimal).
//
// RepairHoldSync (every cluster node): reads the holds at Start, then
// watches them, and keeps each listed table's whole key range from purging
// on this node (TableRegistry::SetPurgeHolds, owner kRepairPurgeHold; the
// compaction filter asks it), releasing a table once no key lists it; after
// applying a change it acknowledges the revision.
//
// RepairHold (the repairing node): puts the key and returns once every live
// member acknowledged it, so that no replica purges from the first digest
// on; keeps the lease alive on a thread of its own until it is destroyed,
// which revokes the lease (the key goes, every node releases).
//
// Thread safety: RepairHoldSync's Start and Stop from one thread (its watch
// applies changes on the watch thread). A RepairHold is owned by one thread.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/etcd_client.h"
#include "common/status.h"

namespace tessera {
class Database;
}

namespace tessera::cluster {

class Membership;

inline constexpr char kRepairHoldsPrefix[] = "/tessera/repair_holds/";
inline constexpr char kRepairHoldAcksPrefix[] = "/tessera/repair_hold_acks/";
inline constexpr char kRepairPurgeHold[] = "repair";

class RepairHoldSync {
 public:
  // REQUIRES: db and etcd outlive the sync. self_host_id: 16 bytes.
  RepairHoldSync(Database* db, EtcdClient* etcd, EtcdEndpoint endpoint, std::string self_host_id);
  ~RepairHoldSync();  // Stop()
  // Applies the holds in etcd now, acknowledges, and starts watching.
  // Errors: etcd's.
  Status Start();
  void Stop();

 private:
  void Apply(int64_t revision);

  Database* const db_;
  EtcdClient* const etcd_;
  const EtcdEndpoint endpoint_;
  const std::string self_host_id_;
  std::map<std::string, std::vector<std::string>> by_holder_;  // key -> table uuid texts (watch thread)
  std::unique_ptr<EtcdWatch> watch_;
};

class RepairHold {
 public:
  // Puts this node's holds on `table_uuids` (text form) and waits until every
  // live member of `membership` acknowledged them. Errors: etcd's; Busy when
  // a live member did not acknowledge within timeout_micros (the hold is
  // released again).
  static Result<std::unique_ptr<RepairHold>> Acquire(Membership* membership, const std::string& self_host_id,
                                                     const std::vector<std::string>& table_uuids,
                                                     int64_t timeout_micros = 10'000'000);
  ~RepairHold();  // stops the keep-alive and revokes the lease

  RepairHold(const RepairHold&) = delete;
  RepairHold& operator=(const RepairHold&) = delete;

 private:
  static constexpr int kLeaseSeconds = 10;
  RepairHold(EtcdClient* etcd, int64_t lease);
  void KeepAlive();

  EtcdClient* const etcd_;
  const int64_t lease_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::cluster
