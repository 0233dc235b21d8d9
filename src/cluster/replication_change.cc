#include "cluster/replication_change.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/membership.h"
#include "cluster/placed_tables.h"
#include "cluster/replicated_tablet.h"
#include "common/bytes.h"
#include "db/database.h"

namespace tessera::cluster {
namespace {

// Where a dropped replica goes from, among `holders` (host ids of one
// group): down or gone first, then a doubled rack, then the fullest node.
std::string PickDrop(const std::vector<std::string>& holders, const std::map<std::string, ReplicaCountNode*>& by_host) {
  std::map<std::string, int> per_rack;
  for (const auto& h : holders) {
    if (auto n = by_host.find(h); n != by_host.end()) ++per_rack[n->second->rack];
  }
  auto rank = [&](const std::string& h) {
    auto n = by_host.find(h);
    if (n == by_host.end()) return std::make_tuple(0, 0, 0);
    const ReplicaCountNode& node = *n->second;
    return std::make_tuple(node.alive ? 1 : 0, per_rack[node.rack] > 1 ? 0 : 1, -node.tablets);
  };
  return *std::min_element(holders.begin(), holders.end(),
                           [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
}

// Where an added replica goes: a live node of the group holding none of
// `replicas`, a new rack first, then the emptiest; "" when none can.
std::string PickAdd(const std::string& group, bool simple, const std::vector<std::string>& replicas,
                    const std::vector<ReplicaCountNode>& nodes, const std::map<std::string, ReplicaCountNode*>& by_host) {
  std::set<std::string> racks;
  for (const auto& h : replicas) {
    if (auto n = by_host.find(h); n != by_host.end()) racks.insert(n->second->rack);
  }
  const ReplicaCountNode* best = nullptr;
  auto rank = [&](const ReplicaCountNode& n) { return std::make_tuple(racks.count(n.rack) ? 1 : 0, n.tablets, n.host_id); };
  for (const auto& n : nodes) {
    if (!n.alive || (!simple && n.data_center != group)) continue;
    if (std::find(replicas.begin(), replicas.end(), n.host_id) != replicas.end()) continue;
    if (!best || rank(n) < rank(*best)) best = &n;
  }
  return best ? best->host_id : std::string();
}

}  // namespace

std::vector<ReplicaCountChange> PlanReplicaCounts(const ReplicationFactors& factors,
                                                  const std::vector<TabletReplicas>& tablets,
                                                  std::vector<ReplicaCountNode>* nodes,
                                                  std::vector<std::string>* problems) {
  const bool simple = !factors.network_topology;
  const std::map<std::string, int> wanted =
      simple ? std::map<std::string, int>{{"", factors.simple_factor}} : factors.per_dc;
  std::map<std::string, ReplicaCountNode*> by_host;
  for (auto& n : *nodes) by_host[n.host_id] = &n;
  // A replica on a node that is no member has no data center: a group no
  // factor names, so it is dropped.
  const std::string kNoMember = "\x01no member";
  std::vector<ReplicaCountChange> changes;
  for (size_t i = 0; i < tablets.size(); ++i) {
    const TabletReplicas& t = tablets[i];
    if (t.transition) continue;
    std::map<std::string, std::vector<std::string>> held;  // group -> replicas
    for (const auto& [group, factor] : wanted) held[group];
    for (const auto& h : t.replicas) {
      auto n = by_host.find(h);
      held[n == by_host.end() ? kNoMember : (simple ? std::string() : n->second->data_center)].push_back(h);
    }
    for (const auto& [group, holders] : held) {
      auto w = wanted.find(group);
      const int want = w == wanted.end() ? 0 : w->second;
      const int have = static_cast<int>(holders.size());
      if (have == want) continue;
      ReplicaCountChange c;
      c.tablet = i;
      c.group = group == kNoMember ? "" : group;
      if (have < want) {
        c.add = PickAdd(group, simple, t.replicas, *nodes, by_host);
        if (c.add.empty()) {
          problems->push_back("tablet " + (t.start.empty() ? std::string("start") : ToHex(t.start)) + " needs " +
                              std::to_string(want) + " replicas in " + (simple ? "the cluster" : group) + " and has " +
                              std::to_string(have) + ", and no live node there holds none of them");
          break;
        }
        ++by_host[c.add]->tablets;
      } else if (t.replicas.size() < 2) {
        break;  // a tablet's last replica is not dropped (a factor of 0 in its only data center)
      } else {
        c.drop = PickDrop(holders, by_host);
        if (auto n = by_host.find(c.drop); n != by_host.end()) --n->second->tablets;
      }
      changes.push_back(std::move(c));
      break;  // one change per tablet at a time
    }
  }
  return changes;
}

namespace {

using Clock = std::chrono::steady_clock;

struct PlannedChange {
  std::shared_ptr<const TableSchema> table;
  std::string start;
  ReplicaCountChange change;
};

// One planning pass over `tables` (every placement): the changes to make
// now, how many tablets of the keyspace(s) are in transition (to wait
// for), the problems.
Result<std::vector<PlannedChange>> PlanPass(ReplicationServices* s, const std::vector<PlacedTable>& tables,
                                            const std::string& keyspace, int* in_transition,
                                            std::vector<std::string>* problems) {
  std::vector<ReplicaCountNode> nodes;
  for (const auto& m : s->membership->Members()) {
    nodes.push_back({m.record.host_id, m.record.data_center, m.record.rack, m.alive, 0});
  }
  std::map<std::string, int> count;
  for (const auto& placed : tables) {
    for (const auto& t : placed.placement) {
      for (const auto& h : t.replicas) ++count[h];
    }
  }
  for (auto& n : nodes) n.tablets = count[n.host_id];
  std::vector<PlannedChange> out;
  *in_transition = 0;
  for (const auto& placed : tables) {
    if (!keyspace.empty() && placed.table->keyspace != keyspace) continue;
    TESSERA_ASSIGN_OR_RETURN(KeyspaceMetadata ks, s->db->catalog().GetKeyspace(placed.table->keyspace));
    TESSERA_ASSIGN_OR_RETURN(ReplicationFactors factors, ParseReplication(ks.replication));
    for (const auto& t : placed.placement) *in_transition += t.transition.has_value();
    std::vector<std::string> table_problems;
    for (auto& c : PlanReplicaCounts(factors, placed.placement, &nodes, &table_problems)) {
      out.push_back({placed.table, placed.placement[c.tablet].start, std::move(c)});
    }
    for (auto& p : table_problems) problems->push_back(placed.table->keyspace + "." + placed.table->name + ": " + p);
  }
  return out;
}

}  // namespace

Result<ReplicationChangeReport> ChangeReplication(ReplicationServices* s, const std::string& keyspace,
                                                  const ReplicationChangeOptions& o) {
  if (!keyspace.empty()) TESSERA_RETURN_IF_ERROR(s->db->catalog().GetKeyspace(keyspace).status());
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::microseconds(o.deadline_micros);
  ReplicationChangeReport report;
  int rounds_without_progress = 0;
  const auto stopped = [&o] { return o.stop != nullptr && o.stop->load(); };
  for (;;) {
    if (stopped()) {
      report.errors.push_back("the node is stopping");
      break;
    }
    int in_transition = 0;
    std::vector<std::string> problems;
    TESSERA_ASSIGN_OR_RETURN(std::vector<PlacedTable> tables, ReadPlacedTables(*s));
    TESSERA_ASSIGN_OR_RETURN(std::vector<PlannedChange> plan,
                             PlanPass(s, tables, keyspace, &in_transition, &problems));
    report.remaining = static_cast<int>(plan.size() + problems.size());
    if (plan.empty() && problems.empty() && in_transition == 0) {
      report.complete = true;
      break;
    }
    if (plan.empty() && problems.empty()) {
      // Only tablets in another driver's transition: wait for them.
      if (Clock::now() >= deadline) {
        report.errors.push_back("gave up waiting for tablets in transition");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (plan.empty()) {  // nothing can be done about the rest
      report.errors.insert(report.errors.end(), problems.begin(), problems.end());
      break;
    }
    // One tablet at a time: on a 2-core machine 4 at once took 19 s for 8
    // tablets against 13.6 s (every stage's barrier goes through etcd and
    // each node's placement sync).
    int done = 0;
    for (const PlannedChange& p : plan) {
      if (stopped()) break;
      MoveRequest r{p.table->keyspace, p.table->name, p.start, p.change.drop, p.change.add, o.reason};
      Result<MoveReport> moved = MoveTabletReplica(s, r, o.migration);
      if (moved.ok() && moved->completed) {
        ++done;
        (p.change.add.empty() ? report.dropped : report.added) += 1;
      } else {
        ++report.failed;
        report.errors.push_back(p.table->keyspace + "." + p.table->name + " tablet " + ToHex(p.start) + ": " +
                                (moved.ok() ? moved->error : moved.status().ToString()));
      }
      if (o.max_changes > 0 && report.added + report.dropped >= o.max_changes) break;
    }
    if (o.max_changes > 0 && report.added + report.dropped >= o.max_changes) break;
    rounds_without_progress = done > 0 ? 0 : rounds_without_progress + 1;
    if (rounds_without_progress >= o.max_rounds_without_progress || Clock::now() >= deadline) {
      report.errors.insert(report.errors.end(), problems.begin(), problems.end());
      break;
    }
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));  // refused: the tablet changed
  }
  report.micros = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
  if (report.added + report.dropped > 0 || !report.complete) {
    spdlog::info("tablets: replication of {}: {} replicas added, {} dropped, {} failed, {} tablets left, {} ms",
                 keyspace.empty() ? std::string("every keyspace") : keyspace, report.added, report.dropped,
                 report.failed, report.complete ? 0 : report.remaining, report.micros / 1000);
  }
  return report;
}

Result<bool> ReplicationDiffers(ReplicationServices* s, const std::vector<PlacedTable>& tables) {
  int in_transition = 0;
  std::vector<std::string> problems;
  TESSERA_ASSIGN_OR_RETURN(std::vector<PlannedChange> plan, PlanPass(s, tables, "", &in_transition, &problems));
  return !plan.empty();
}

std::string ReplicationChangeReportJson(const ReplicationChangeReport& report) {
  return nlohmann::json{{"added", report.added},       {"dropped", report.dropped},   {"failed", report.failed},
                        {"remaining", report.remaining}, {"complete", report.complete}, {"errors", report.errors},
                        {"micros", report.micros}}
      .dump();
}

Status ReplicationChangeCoordinator::ApplyReplication(const std::string& keyspace) {
  TESSERA_ASSIGN_OR_RETURN(ReplicationChangeReport report, ChangeReplication(services_, keyspace, options_));
  if (report.complete) return Status::OK();
  std::string why = report.errors.empty() ? std::string("unknown") : report.errors.front();
  return Status::IOError("the replication of keyspace " + keyspace + " changed, but " +
                         std::to_string(report.remaining) + " of its tablets do not have the new factors yet (" +
                         std::to_string(report.errors.size()) + " problems; first: " + why +
                         "); the placement balancer completes them when it runs");
}

}  // namespace tessera::cluster
