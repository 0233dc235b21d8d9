#include "cluster/node_lifecycle.h"

#include <map>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/etcd_client.h"
#include "cluster/node_load.h"
#include "cluster/node_record.h"
#include "cluster/placed_tables.h"
#include "cluster/replicated_tablet.h"
#include "cluster/tablet_map_sync.h"
#include "cluster/tablet_resize.h"
#include "common/bytes.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {
namespace {

struct PlannedMove {
  std::shared_ptr<const TableSchema> table;
  std::string start;
  std::string to;  // host id
};

// Every placed tablet replica `leaving` holds, each with a target.
Result<std::vector<PlannedMove>> Plan(ReplicationServices* s, const MemberState& leaving) {
  auto alive = [s](const std::string& host) {
    auto m = s->membership->Member(host);
    return m && m->alive;
  };
  TESSERA_ASSIGN_OR_RETURN(std::vector<PlacedTable> tables, ReadPlacedTables(*s));
  std::vector<MemberState> candidates;
  for (const auto& m : s->membership->Members()) {
    if (m.alive && m.record.host_id != leaving.record.host_id &&
        m.record.data_center == leaving.record.data_center) {
      candidates.push_back(m);
    }
  }
  std::map<std::string, int> load;  // tablet replicas per host id
  std::vector<std::pair<std::shared_ptr<const TableSchema>, TabletReplicas>> held;
  for (auto& placed : tables) {
    for (auto& t : placed.placement) {
      for (const auto& h : t.replicas) ++load[h];
      if (std::find(t.replicas.begin(), t.replicas.end(), leaving.record.host_id) != t.replicas.end()) {
        held.emplace_back(placed.table, std::move(t));
      }
    }
  }
  std::vector<PlannedMove> moves;
  for (const auto& [table, tablet] : held) {
    // The data streams from the leaving node, or, when it is down, from
    // another replica: a tablet whose only live copy is gone cannot move.
    if (!leaving.alive && std::none_of(tablet.replicas.begin(), tablet.replicas.end(), alive)) {
      return Status::InvalidArgument("a tablet of " + table->keyspace + "." + table->name + " has no live replica but " +
                                     leaving.record.address + "'s: its data cannot be rebuilt");
    }
    const MemberState* best = nullptr;
    for (const auto& c : candidates) {
      const auto& r = tablet.replicas;
      if (std::find(r.begin(), r.end(), c.record.host_id) != r.end()) continue;
      if (!best || load[c.record.host_id] < load[best->record.host_id]) best = &c;
    }
    if (!best) {
      return Status::InvalidArgument("no live node of data center " + leaving.record.data_center +
                                     " can take the replica of a tablet of " + table->keyspace + "." + table->name +
                                     " that " + leaving.record.address + " holds: its other nodes all hold one");
    }
    ++load[best->record.host_id];
    moves.push_back({table, tablet.start, best->record.host_id});
  }
  return moves;
}

std::string AddressOf(ReplicationServices* s, const std::string& host) {
  auto m = s->membership->Member(host);
  return m ? m->record.address : UuidText(host);
}

}  // namespace

namespace {

// Moves every replica `leaving` holds, then deletes its record.
Result<DecommissionReport> Leave(ReplicationServices* s, const MemberState& leaving,
                                 const MigrationOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<PlannedMove> plan, Plan(s, leaving));
  DecommissionReport report;
  for (const auto& p : plan) {
    MoveRequest r{p.table->keyspace, p.table->name, p.start, leaving.record.host_id, p.to,
                  (leaving.alive ? "decommission of " : "removenode of ") + leaving.record.address};
    auto moved = MoveTabletReplica(s, r, options);
    DecommissionReport::Move m{p.table->keyspace, p.table->name, ToHex(p.start), AddressOf(s, p.to), {}};
    if (moved.ok()) m.report = *moved;
    report.moves.push_back(m);
    if (!moved.ok() || !moved->completed) {
      report.error = p.table->keyspace + "." + p.table->name + " tablet " + ToHex(p.start) + ": " +
                     (moved.ok() ? moved->error : moved.status().ToString());
      spdlog::warn("cluster: {} cannot leave: {}", leaving.record.address, report.error);
      return report;
    }
  }
  const std::string id = UuidText(leaving.record.host_id);
  // Its split and merge proposals go too (a removed node's would stay
  // forever; the leader already ignores a non-member's).
  auto left = s->membership->etcd().Txn({}, {EtcdOp::Delete(kNodesPrefix + id), EtcdOp::Delete(kLoadPrefix + id),
                                             EtcdOp::Delete(kPlacementAcksPrefix + id),
                                             EtcdOp::Delete(kResizePrefix + id)});
  if (!left.ok()) {
    report.error = "every replica moved, but the node's record stays: " + left.status().ToString();
    return report;
  }
  report.left = true;
  spdlog::info("cluster: {} left: {} tablet replicas moved off, node record deleted", leaving.record.address,
               plan.size());
  return report;
}

Result<MemberState> MemberNamed(ReplicationServices* s, const std::string& node) {
  for (const auto& m : s->membership->Members()) {
    if (m.record.address == node || UuidText(m.record.host_id) == node) return m;
  }
  return Status::NotFound("no member of the cluster is " + node);
}

}  // namespace

Result<DecommissionReport> DecommissionNode(ReplicationServices* s, const std::string& node,
                                            const MigrationOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(MemberState leaving, MemberNamed(s, node));
  if (!leaving.alive) return Status::InvalidArgument("node " + node + " is down: remove it with removenode");
  return Leave(s, leaving, options);
}

Result<DecommissionReport> RemoveNode(ReplicationServices* s, const std::string& node, const MigrationOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(MemberState dead, MemberNamed(s, node));
  if (dead.alive) return Status::InvalidArgument("node " + node + " is up: decommission it instead");
  return Leave(s, dead, options);
}

std::string DecommissionReportJson(const DecommissionReport& report) {
  nlohmann::json moves = nlohmann::json::array();
  for (const auto& m : report.moves) {
    moves.push_back({{"keyspace", m.keyspace},
                     {"table", m.table},
                     {"start", m.start},
                     {"to", m.to},
                     {"report", nlohmann::json::parse(MoveReportJson(m.report))}});
  }
  return nlohmann::json{{"left", report.left}, {"moves", moves}, {"error", report.error}}.dump();
}

}  // namespace tessera::cluster
