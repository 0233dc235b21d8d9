// PlacementBalancer: one node at a time moves tablet replicas between the
// live nodes of a data center until each holds about as many (issue 11's
// balancer, first part: by count; ScyllaDB's load balancer balances the
// same way, by tablet count per node).
//
// Leadership: the node holding /tessera/balancer/leader (value: its host id
// text; FROZEN) plans. The key is created only if absent, bound to a lease
// of the balancer's own (lease_seconds), renewed every round; when the
// leader dies its lease expires and another node's next round takes over.
// A deposed leader writes nothing: every placement write of its moves also
// compares the leader key's create_revision with the one it created
// (MigrationOptions::fence_key), so once the key expired or another node
// holds it the move stops, and the migration resumer finishes it.
//
// A round (every interval, leader only): nothing while any tablet is in
// transition (one move in flight cluster-wide); else per data center,
// counting tablet replicas of the live nodes over every placed table, when
// max - min >= 2 and max > max_over_mean x mean (hysteresis: a move only
// when it helps and the spread is worth it, so nothing oscillates), one
// replica moves from the fullest node to the emptiest, of a tablet the
// emptiest does not hold. Each move and its reason is recorded in
// system.tablet_events on the leader (kind "migration").
//
// Stop is explicit (the destructor calls it): it wakes the thread, lets a
// move in flight finish, revokes the lease.
//
// Thread safety: Start/Stop from one thread.
#pragma once

#include <cstdint>
#include <string>

#include "cluster/tablet_migration.h"
#include "common/periodic_task.h"

namespace tessera::cluster {

struct ReplicationServices;

inline constexpr char kBalancerLeaderKey[] = "/tessera/balancer/leader";

struct PlacementBalancerOptions {
  int64_t interval_micros = 5'000'000;
  int lease_seconds = 10;
  double max_over_mean = 1.1;
  MigrationOptions migration;
};

class PlacementBalancer {
 public:
  // REQUIRES: services outlive the balancer (Stop before they go).
  PlacementBalancer(ReplicationServices* services, PlacementBalancerOptions options);
  ~PlacementBalancer();  // Stop()
  void Start();
  void Stop();

  // One round now, on the caller's thread (tests): true when it moved a
  // replica. Leads first if no one does.
  bool RunOnce();

 private:
  bool Lead();
  bool Round();

  ReplicationServices* const services_;
  const PlacementBalancerOptions options_;
  int64_t lease_ = 0;  // the balancer thread's
  int64_t leader_revision_ = 0;  // the leader key's create_revision while this node leads
  PeriodicTask task_;
};

}  // namespace tessera::cluster
