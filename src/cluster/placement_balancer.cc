#include "cluster/placement_balancer.h"

#include <map>

#include <spdlog/spdlog.h>

#include "cluster/etcd_client.h"
#include "cluster/replicated_tablet.h"
#include "common/bytes.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {

PlacementBalancer::PlacementBalancer(ReplicationServices* services, PlacementBalancerOptions options)
    : services_(services), options_(std::move(options)) {}

PlacementBalancer::~PlacementBalancer() { Stop(); }

void PlacementBalancer::Start() {
  task_.Start(options_.interval_micros, [this] { RunOnce(); });
}

void PlacementBalancer::Stop() {
  task_.Stop();
  if (lease_ != 0) {
    (void)services_->membership->etcd().LeaseRevoke(lease_);  // the next leader need not wait for the TTL
    lease_ = 0;
  }
}

bool PlacementBalancer::RunOnce() { return Lead() && Round(); }

// True while this node holds the leader key.
bool PlacementBalancer::Lead() {
  EtcdClient& etcd = services_->membership->etcd();
  if (lease_ != 0 && !etcd.LeaseKeepAlive(lease_).ok()) lease_ = 0;  // expired: the key went with it
  if (lease_ == 0) {
    auto lease = etcd.LeaseGrant(options_.lease_seconds);
    if (!lease.ok()) return false;
    lease_ = *lease;
  }
  const std::string self = UuidText(services_->self_host_id);
  EtcdCompare absent;
  absent.key = kBalancerLeaderKey;
  absent.target = EtcdCompare::Target::kCreateRevision;
  absent.revision = 0;
  auto txn = etcd.Txn({absent}, {EtcdOp::Put(kBalancerLeaderKey, self, lease_)}, {EtcdOp::Range(kBalancerLeaderKey)});
  if (!txn.ok()) return false;
  if (txn->succeeded) {
    spdlog::info("tablets: this node now balances tablet placement (leader)");
    leader_revision_ = txn->revision;
    return true;
  }
  if (txn->ranges.empty() || txn->ranges.front().empty()) return false;
  const EtcdKeyValue& leader = txn->ranges.front().front();
  if (leader.value != self || leader.lease != lease_) return false;
  leader_revision_ = leader.create_revision;
  return true;
}

bool PlacementBalancer::Round() {
  ReplicationServices* s = services_;
  std::map<std::string, std::shared_ptr<const TableSchema>> by_uuid;
  for (auto& t : s->db->catalog().AllTables()) by_uuid.emplace(UuidText(t->uuid), t);
  auto range = s->membership->etcd().Range(kTabletsPrefix, EtcdPrefixEnd(kTabletsPrefix));
  if (!range.ok()) return false;
  struct Held {
    std::shared_ptr<const TableSchema> table;
    TabletReplicas tablet;
  };
  std::vector<Held> tablets;
  for (const auto& kv : range->kvs) {
    auto table = by_uuid.find(kv.key.substr(sizeof(kTabletsPrefix) - 1));
    if (table == by_uuid.end()) continue;
    auto placement = DecodePlacement(kv.value);
    if (!placement.ok()) continue;
    for (auto& t : *placement) {
      if (t.transition) return false;  // one move in flight at a time
      tablets.push_back({table->second, std::move(t)});
    }
  }
  // Tablet replicas per live node, per data center.
  std::map<std::string, std::map<std::string, int>> count;  // dc -> host id -> replicas
  std::map<std::string, std::string> dc_of, address_of;
  for (const auto& m : s->membership->Members()) {
    if (!m.alive) continue;
    count[m.record.data_center][m.record.host_id] = 0;
    dc_of[m.record.host_id] = m.record.data_center;
    address_of[m.record.host_id] = m.record.address;
  }
  for (const auto& h : tablets) {
    for (const auto& r : h.tablet.replicas) {
      if (auto dc = dc_of.find(r); dc != dc_of.end()) ++count[dc->second][r];
    }
  }
  for (const auto& [dc, nodes] : count) {
    if (nodes.size() < 2) continue;
    auto [min, max] = std::minmax_element(nodes.begin(), nodes.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    int total = 0;
    for (const auto& [host, n] : nodes) total += n;
    const double mean = static_cast<double>(total) / static_cast<double>(nodes.size());
    if (max->second - min->second < 2 || max->second <= options_.max_over_mean * mean) continue;
    for (const auto& h : tablets) {
      const auto& r = h.tablet.replicas;
      if (std::find(r.begin(), r.end(), max->first) == r.end() || std::find(r.begin(), r.end(), min->first) != r.end()) {
        continue;
      }
      MoveRequest move{h.table->keyspace, h.table->name, h.tablet.start, max->first, min->first};
      char why[256];
      std::snprintf(why, sizeof why, "balance: %s holds %d tablet replicas, %s %d (mean %.1f in %s)",
                    address_of[max->first].c_str(), max->second, address_of[min->first].c_str(), min->second, mean,
                    dc.c_str());
      move.reason = why;
      spdlog::info("tablets: {}.{}: moving the replica of tablet {} from {} to {}: {}", h.table->keyspace,
                   h.table->name, ToHex(h.tablet.start), address_of[max->first], address_of[min->first], why);
      MigrationOptions fenced = options_.migration;  // a deposed leader's writes fail
      fenced.fence_key = kBalancerLeaderKey;
      fenced.fence_create_revision = leader_revision_;
      auto report = MoveTabletReplica(s, move, fenced);
      return report.ok() && report->completed;
    }
  }
  return false;
}

}  // namespace tessera::cluster
