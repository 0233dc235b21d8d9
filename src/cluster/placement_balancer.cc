#include "cluster/placement_balancer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "cluster/etcd_client.h"
#include "cluster/node_load.h"
#include "cluster/placed_tables.h"
#include "cluster/replication_change.h"
#include "cluster/replica_reads.h"
#include "cluster/replicated_tablet.h"
#include "common/bytes.h"
#include "common/uuid.h"
#include "coordinator/coordinator.h"
#include "db/database.h"
#include "tablets/balancer_policy.h"

namespace tessera::cluster {

PlacementBalancer::PlacementBalancer(ReplicationServices* services, PlacementBalancerOptions options)
    : services_(services), options_(std::move(options)) {}

PlacementBalancer::~PlacementBalancer() { Stop(); }

void PlacementBalancer::Start() {
  if (options_.moves) task_.Start(options_.interval_micros, [this] { RunOnce(); });
  resize_task_.Start(options_.resize_interval_micros, [this] { ResizeOnce(); });
}

void PlacementBalancer::Stop() {
  resize_task_.Stop();
  task_.Stop();
  ReapMoves(/*wait=*/true);
  std::lock_guard<std::mutex> lock(lead_mu_);
  if (lease_ != 0) {
    (void)services_->membership->etcd().LeaseRevoke(lease_);  // the next leader need not wait for the TTL
    lease_ = 0;
  }
}

bool PlacementBalancer::RunOnce() { return Lead() && Round(); }

bool PlacementBalancer::ResizeOnce() { return Lead() && Resize(); }

// True while this node holds the leader key.
bool PlacementBalancer::Lead() {
  std::lock_guard<std::mutex> lock(lead_mu_);
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

namespace {

int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Every placed tablet of `tables`, those in transition too, one by one.
std::vector<PlacedTablet> PlacedTablets(const std::vector<PlacedTable>& tables) {
  std::vector<PlacedTablet> out;
  for (const auto& placed : tables) {
    for (const auto& t : placed.placement) out.push_back({placed.table, t});
  }
  return out;
}

// Every node's last load report, by host id text.
std::map<std::string, NodeLoad> LoadReports(EtcdClient& etcd) {
  std::map<std::string, NodeLoad> out;
  auto range = etcd.Range(kLoadPrefix, EtcdPrefixEnd(kLoadPrefix));
  if (!range.ok()) return out;
  for (const auto& kv : range->kvs) {
    if (auto load = DecodeNodeLoad(kv.value); load.ok()) out[kv.key.substr(sizeof(kLoadPrefix) - 1)] = *load;
  }
  return out;
}

// Requests/s one replica of each placed tablet serves: what every node
// reports serving for it (a moved tablet's old holder still reports it while
// its window runs down, its new holder while its window fills), divided by
// its replica count; and the bytes of its largest reported copy.
std::vector<TabletPlacementLoad> TabletLoads(const std::vector<PlacedTablet>& placed,
                                             const std::map<std::string, NodeLoad>& reports) {
  std::map<std::pair<std::string, std::string>, double> served;  // (table uuid text, start) -> requests/s
  std::map<std::pair<std::string, std::string>, uint64_t> stored;  // the largest copy any node reports
  for (const auto& [host, report] : reports) {
    for (const auto& t : report.tablet_loads) {
      served[{t.table_uuid, t.start}] += t.reads + t.writes;
      auto& bytes = stored[{t.table_uuid, t.start}];
      bytes = std::max(bytes, t.bytes);
    }
  }
  std::vector<TabletPlacementLoad> out;
  for (const auto& p : placed) {
    TabletPlacementLoad t{p.tablet.start, p.tablet.replicas, 0, 0};
    const std::pair<std::string, std::string> key{UuidText(p.table->uuid), p.tablet.start};
    if (auto it = served.find(key); it != served.end() && !t.replicas.empty()) {
      t.load = it->second / static_cast<double>(t.replicas.size());
    }
    if (auto it = stored.find(key); it != stored.end()) t.bytes = it->second;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

bool PlacementBalancer::Round() {
  ReplicationServices* s = services_;
  ReapMoves(/*wait=*/false);
  auto tables = ReadPlacedTables(*s);
  if (!tables.ok()) return false;
  const std::vector<PlacedTablet> placed = PlacedTablets(*tables);
  // Moves in flight, this leader's or not: each node's share, and their
  // tablets counted where they are going.
  std::map<std::string, int> moving_on;  // host id -> moves it is the source or target of
  const auto reports = LoadReports(s->membership->etcd());
  std::vector<TabletPlacementLoad> tablets = TabletLoads(placed, reports);
  for (size_t i = 0; i < placed.size(); ++i) {
    const TabletReplicas& t = placed[i].tablet;
    auto mine = std::find_if(moves_in_flight_.begin(), moves_in_flight_.end(), [&](const MoveInFlight& m) {
      return m.table_uuid == placed[i].table->uuid && m.start == t.start;
    });
    if (!t.transition && mine == moves_in_flight_.end()) continue;
    // In transition, or started here and not written yet.
    tablets[i].moving = true;
    const TabletTransition move = t.transition ? *t.transition : TabletTransition{{}, mine->from, mine->to, {}};
    tablets[i].replicas = NewReplicas(t.replicas, move);
    for (const std::string* host : {&move.leaving, &move.pending}) {
      if (!host->empty()) ++moving_on[*host];
    }
  }
  const bool in_transition = !moving_on.empty() || !moves_in_flight_.empty();
  if (!in_transition && CompleteReplication(*tables)) return true;
  std::map<std::string, std::vector<NodePlacementLoad>> by_dc;
  bool current = !in_transition;  // and every live node reported after the last change settled
  for (const auto& m : s->membership->Members()) {
    if (!m.alive) continue;
    by_dc[m.record.data_center].push_back({m.record.host_id, m.record.address, 0, 0});
    auto report = reports.find(UuidText(m.record.host_id));
    current = current && report != reports.end() &&
              report->second.at_micros >= last_change_micros_.load() + options_.load_settle_micros;
  }
  if (current) {
    recent_splits_.clear();
  } else {
    AssumeSplitLoads(placed, &tablets);
  }
  const int64_t now = WallMicros();
  int started = 0;
  for (auto& [dc, dc_nodes] : by_dc) {
    while (started < options_.max_moves_per_round) {
      std::vector<NodePlacementLoad> nodes = dc_nodes;
      for (auto& n : nodes) {
        for (const auto& t : tablets) n.tablets += std::count(t.replicas.begin(), t.replicas.end(), n.host_id);
      }
      NodeLoads(tablets, &nodes);
      PlacementDecision d = PlanPlacement(dc, nodes, tablets, options_.plan, current);
      if (d.kind == PlacementDecision::Kind::kNone) break;
      const PlacedTablet& p = placed[d.tablet];
      if (d.kind == PlacementDecision::Kind::kRefusal) {
        RecordRefusal(dc, *p.table, d.reason, now);
        break;
      }
      if (d.kind == PlacementDecision::Kind::kSplit) {
        RecentSplit split{UuidText(p.table->uuid), p.tablet.start, p.tablet.end, tablets[d.tablet].load};
        if (!Split(p.table, p.tablet.start, d.reason, d.split_share, reports, &split)) return started > 0;
        recent_splits_.push_back(std::move(split));
        last_change_micros_ = WallMicros();
        return true;
      }
      const int limit = std::max(1, options_.max_moves_per_node);
      if (moving_on[d.from] >= limit || moving_on[d.to] >= limit) break;  // the next round, once one ends
      StartMove(p.table, p.tablet.start, d);
      ++moving_on[d.from];
      ++moving_on[d.to];
      ++started;
      // Planned on as if it had ended; the load rules wait for reports from after it.
      tablets[d.tablet].moving = true;
      std::replace(tablets[d.tablet].replicas.begin(), tablets[d.tablet].replicas.end(), d.from, d.to);
      current = false;
    }
  }
  return started > 0;
}

void PlacementBalancer::StartMove(const std::shared_ptr<const TableSchema>& table, const std::string& start,
                                  const PlacementDecision& d) {
  moves_in_flight_.push_back({table->uuid, start, d.from, d.to,
                              std::async(std::launch::async, [this, table, start, d, revision = leader_revision_.load()] {
                                return Move(table, start, d, revision);
                              })});
}

void PlacementBalancer::ReapMoves(bool wait) {
  for (auto it = moves_in_flight_.begin(); it != moves_in_flight_.end();) {
    if (!wait && it->completed.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ++it;
      continue;
    }
    if (it->completed.get()) last_change_micros_ = WallMicros();
    it = moves_in_flight_.erase(it);
  }
}

// Rule 0: a tablet with more or fewer replicas than its keyspace asks (an
// ALTER KEYSPACE whose node died before every tablet had the new factors)
// gets one replica added or dropped, before anything is balanced.
bool PlacementBalancer::CompleteReplication(const std::vector<PlacedTable>& tables) {
  auto differs = ReplicationDiffers(services_, tables);
  if (!differs.ok() || !*differs) return false;
  ReplicationChangeOptions o;
  o.migration = options_.migration;
  o.migration.fence_key = kBalancerLeaderKey;
  o.migration.fence_create_revision = leader_revision_;
  o.max_changes = 1;
  o.max_rounds_without_progress = 1;
  o.deadline_micros = 0;  // never waits for tablets in transition
  o.reason = "replication factor change (completed by the placement balancer)";
  auto report = ChangeReplication(services_, "", o);
  if (!report.ok()) return false;
  if (report->added + report->dropped == 0) return false;
  last_change_micros_ = WallMicros();
  return true;
}

// A tablet split less than a settle period ago reports next to nothing (its
// counters are new, its window still empty), but the leader cut it where its
// sample put a known share of the load on each side: until the reports
// settle, the pieces are taken to carry those shares of what the whole did
// (a piece split again meanwhile: half of its side's).
void PlacementBalancer::AssumeSplitLoads(const std::vector<PlacedTablet>& placed,
                                         std::vector<TabletPlacementLoad>* tablets) const {
  for (const auto& split : recent_splits_) {
    for (size_t i = 0; i < placed.size(); ++i) {
      const TabletReplicas& t = placed[i].tablet;
      const bool inside = t.start >= split.start && (split.end.empty() || (!t.end.empty() && t.end <= split.end));
      if (UuidText(placed[i].table->uuid) != split.table_uuid || !inside) continue;
      if (split.cut.empty()) {
        (*tablets)[i].load = split.load / 2;
      } else {
        (*tablets)[i].load = split.load * (t.start < split.cut ? split.left_share : 1 - split.left_share);
      }
    }
  }
}

bool PlacementBalancer::Move(const std::shared_ptr<const TableSchema>& table, const std::string& start,
                             const PlacementDecision& d, int64_t leader_revision) {
  MoveRequest move{table->keyspace, table->name, start, d.from, d.to};
  move.reason = d.reason;
  spdlog::info("tablets: {}.{}: moving the replica of tablet {} from {} to {}: {}", table->keyspace, table->name,
               ToHex(start), UuidText(d.from), UuidText(d.to), d.reason);
  MigrationOptions fenced = options_.migration;  // a deposed leader's writes fail
  fenced.fence_key = kBalancerLeaderKey;
  fenced.fence_create_revision = leader_revision;
  auto report = MoveTabletReplica(services_, move, fenced);
  return report.ok() && report->completed;
}

// A load split of the placement tablet starting at `start` (table-relative),
// cut where the cluster's sample of the keys (ClusterKeySample) puts `share` of
// the load on one side, or at the median partition when it sampled too few;
// through Database, so that the split goes through the placement in etcd
// like any other.
bool PlacementBalancer::Split(const std::shared_ptr<const TableSchema>& table, const std::string& start,
                              const std::string& reason, double share, const std::map<std::string, NodeLoad>& reports,
                              RecentSplit* split) {
  Database* db = services_->db;
  const std::string absolute = AbsoluteKey(table->id, start);
  TableLoad load = db->TabletLoads(*table);
  if (load.tablets.size() >= db->balancer_options().max_tablets_per_table) {
    RecordRefusal("", *table, "split of the hottest tablet declined: the table has " +
                  std::to_string(load.tablets.size()) + " tablets, the most a table may have", WallMicros());
    return false;
  }
  for (const TabletLoad& own : load.tablets) {
    if (own.start != absolute) continue;
    size_t nodes = 0;
    TabletLoad t = own;
    t.sample = ClusterKeySample(table->id, UuidText(table->uuid), own, UuidText(services_->self_host_id), reports,
                                &nodes);
    std::optional<std::string> cut;
    std::string refusal, how = "; cut at the median partition (too few keys sampled)";
    double left_share = 0.5;
    if (t.sample.keys.size() >= kMinSampledKeys) {
      cut = LoadSplitPosition(load, t, db->balancer_options(), &refusal, share, &left_share);
      if (!cut) {
        RecordRefusal("", *table, "split of the hottest tablet declined: " + refusal, WallMicros());
        return false;
      }
      how = fmt::format("; cut where the sample of {} keys from {} node{} puts {:.0f}% / {:.0f}% of the load",
                        t.sample.keys.size(), nodes, nodes == 1 ? "" : "s", left_share * 100,
                        (1 - left_share) * 100);
    }
    auto done = services_->coordinator->SplitTablet(*table, t.id, cut, reason + how);
    if (!done.ok()) {
      RecordRefusal("", *table, "split of the hottest tablet failed: " + done.status().ToString(), WallMicros());
      return false;
    }
    if (cut) {
      split->cut = RelativeKey(table->id, *cut).value_or(std::string());
      split->left_share = split->cut.empty() ? 0.5 : left_share;
    }
    spdlog::info("tablets: {}.{}: split tablet {}: {}{}", table->keyspace, table->name, t.id, reason, how);
    return true;
  }
  return false;  // this node has not applied the placement yet
}

// A decided change's identity, whatever its reason says (the reasons carry
// rates that change every round).
std::string PlacementBalancer::RefusalKey(const PlacementResizeProposal& p) {
  const char kind = p.kind == ResizeProposal::Kind::kSplit ? 's' : 'm';
  return std::string(1, kind) + '\0' + p.host + '\0' + p.table_uuid + '\0' + ToHex(p.start) + '\0' +
         ToHex(p.end) + '\0' + ToHex(p.boundary) + '\0' + (p.position ? "p" + ToHex(*p.position) : "");
}

bool PlacementBalancer::Resize() {
  ReplicationServices* s = services_;
  // The proposals first: with none standing (most rounds) the placements are not read.
  std::set<std::string> alive;
  for (const auto& m : s->membership->Members()) {
    if (m.alive) alive.insert(UuidText(m.record.host_id));
  }
  auto range = s->membership->etcd().Range(kResizePrefix, EtcdPrefixEnd(kResizePrefix));
  if (!range.ok()) return false;
  const int64_t now = WallMicros();
  std::erase_if(refused_resizes_, [&](const auto& e) { return now >= e.second; });
  std::vector<PlacementResizeProposal> proposals;
  for (const auto& kv : range->kvs) {
    const std::string host = kv.key.substr(sizeof(kResizePrefix) - 1);
    if (!alive.count(host)) continue;  // a node that is down or gone proposes nothing
    auto decoded = DecodeResizeProposals(kv.value, host);
    if (!decoded.ok()) continue;
    for (auto& p : *decoded) {
      if (!refused_resizes_.count(RefusalKey(p))) proposals.push_back(std::move(p));
    }
  }
  if (proposals.empty()) return false;
  auto tables = ReadPlacedTables(*s);
  if (!tables.ok()) return false;
  std::map<std::string, std::vector<TabletReplicas>> placements;
  std::map<std::string, std::shared_ptr<const TableSchema>> schemas;
  for (const auto& placed : *tables) {
    const std::string uuid = UuidText(placed.table->uuid);
    auto& placement = placements[uuid] = placed.placement;
    for (auto& t : placement) {  // host ids as the proposals name them
      for (auto& r : t.replicas) r = UuidText(r);
    }
    schemas[uuid] = placed.table;
  }
  bool changed = false;
  for (const auto& decided : DecideResizes(placements, proposals)) {
    Status done = CarryOut(schemas[decided.table_uuid], decided);
    if (done.ok()) {
      changed = true;
      last_change_micros_ = WallMicros();
      continue;
    }
    // NotFound: this node's map is behind, or the tablet changed meanwhile;
    // a move that began since the placement was read: both pass, try again.
    auto placement = s->placements->Cached(schemas[decided.table_uuid]->uuid);
    const TabletReplicas* now_placed = placement ? PlacementOf(*placement, decided.start) : nullptr;
    if (done.IsNotFound() || (now_placed != nullptr && now_placed->transition)) continue;
    // Refused (one partition, too many tablets): not again for a while; a
    // failed read (the median through the replicas): after a round or two.
    const int64_t wait = done.IsInvalidArgument() ? options_.refused_resize_micros : options_.failed_resize_micros;
    refused_resizes_[RefusalKey(decided)] = now + wait;
  }
  return changed;
}

Status PlacementBalancer::CarryOut(const std::shared_ptr<const TableSchema>& table,
                                   const PlacementResizeProposal& decided) {
  Database* db = services_->db;
  const bool split = decided.kind == ResizeProposal::Kind::kSplit;
  const std::string start = AbsoluteKey(table->id, decided.start);
  const std::string end = AbsoluteEnd(table->id, decided.end);
  const std::vector<Database::TabletRange> ranges = db->TabletRanges(*table);
  // This node's map must have applied the placement the decision was made on.
  auto left = std::find_if(ranges.begin(), ranges.end(), [&](const auto& r) { return r.start == start; });
  const Status behind = Status::NotFound("this node has not applied the placement yet");
  if (left == ranges.end()) return behind;
  const bool applied = split ? left->end == end
                             : left->end == AbsoluteKey(table->id, decided.boundary) &&
                                   std::next(left) != ranges.end() && std::next(left)->end == end;
  if (!applied) return behind;
  std::optional<TabletId> id;
  for (const auto& t : db->Tablets(*table)) {
    if (t.start == start) id = t.id;
  }
  if (!id) return behind;
  const std::string reason = decided.reason + " (proposed by node " + decided.host + ", decided by the balancer leader)";
  // Recorded only while this node still leads: a round that outlived its
  // leadership (a pause longer than the lease) writes nothing.
  const TabletChangeSource fenced(TabletChangeOrigin::kThisNode, leader_revision_.load());
  Status done = Status::OK();
  if (split) {
    std::optional<std::string> cut;
    if (decided.position) cut = AbsoluteKey(table->id, *decided.position);
    done = services_->coordinator->SplitTablet(*table, *id, cut, reason, fenced).status();
  } else {
    done = db->MergeTablets(*table, *id, reason, fenced).status();
  }
  if (!done.ok()) {
    spdlog::info("tablets: {}.{}: the {} node {} proposed failed: {}", table->keyspace, table->name,
                 split ? "split" : "merge", decided.host, done.ToString());
    return done;
  }
  spdlog::info("tablets: {}.{}: {} tablet at {}: {}", table->keyspace, table->name, split ? "split" : "merged",
               ToHex(decided.start), reason);
  return Status::OK();
}

void PlacementBalancer::RecordRefusal(const std::string& dc, const TableSchema& table, const std::string& reason,
                                      int64_t now) {
  int64_t& last = last_refusal_micros_[dc];
  if (now - last < options_.refusal_interval_micros) return;
  last = now;
  spdlog::info("tablets: placement balancer: {}", reason);
  services_->db->RecordTabletEvent({now, table.id, "refusal", {}, {}, reason});
}

}  // namespace tessera::cluster
