#include "cluster/tablet_map_sync.h"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "cluster/replica_reads.h"
#include "cluster/replicated_tablet.h"
#include "common/bytes.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {
namespace {

// The table uuid (16 bytes) a placement key names, or empty.
std::string TableUuidOf(const std::string& key) {
  const std::string prefix = kTabletsPrefix;
  if (key.compare(0, prefix.size(), prefix) != 0) return {};
  auto uuid = UuidFromText(key.substr(prefix.size()));
  return uuid.ok() ? *uuid : std::string();
}

// How a split or merge this sync tried ended.
enum class Outcome { kDone, kRace, kFailed };

// NotFound is a race with this node's own balancer (the tablet id is gone,
// or the placement changed again): worth another look, not a warning.
Outcome Classify(const Status& s, const TableSchema& table) {
  if (s.ok()) return Outcome::kDone;
  if (s.IsNotFound()) return Outcome::kRace;
  spdlog::warn("tablets: {}.{}: cannot apply a change recorded in etcd: {}", table.keyspace, table.name,
               s.ToString());
  return Outcome::kFailed;
}

// Races retried per table and pass before the sync gives up until the next change.
constexpr int kMaxRaces = 64;

}  // namespace

TabletMapSync::TabletMapSync(Database* db, EtcdClient* etcd, EtcdEndpoint etcd_endpoint, TabletPlacements* placements,
                             PlacementFence* fence, std::string self_host_id)
    : db_(db),
      etcd_(etcd),
      endpoint_(std::move(etcd_endpoint)),
      placements_(placements),
      fence_(fence),
      self_host_id_(std::move(self_host_id)) {}

TabletMapSync::~TabletMapSync() { Stop(); }

Status TabletMapSync::Start() {
  TESSERA_ASSIGN_OR_RETURN(EtcdRangeResult all, etcd_->Range(kTabletsPrefix, EtcdPrefixEnd(kTabletsPrefix)));
  bool applied = true;
  for (const auto& kv : all.kvs) {
    const std::string uuid = TableUuidOf(kv.key);
    if (!uuid.empty()) applied = Apply(uuid, kv.value, kv.mod_revision) && applied;
  }
  DropCopiesNotHeld();
  if (applied) Acknowledge(all.revision);
  watch_ = std::make_unique<EtcdWatch>(
      endpoint_, kTabletsPrefix, EtcdPrefixEnd(kTabletsPrefix), all.revision + 1,
      [this](const std::vector<EtcdWatchEvent>& events, int64_t) {
        int64_t newest = 0;
        bool applied = true;
        for (const auto& e : events) {
          const std::string uuid = TableUuidOf(e.kv.key);
          if (e.type == EtcdWatchEvent::Type::kPut && !uuid.empty()) {
            applied = Apply(uuid, e.kv.value, e.kv.mod_revision) && applied;
          }
          newest = std::max(newest, e.kv.mod_revision);
        }
        // A boundary not applied here would send this node's requests for
        // the keys past it to the replicas of the tablet before it: no
        // migration may count on this node until it is (the next change retries).
        if (newest > 0 && applied) Acknowledge(newest);
        if (!applied) {
          spdlog::warn("tablets: placement revision {} not acknowledged: a boundary it records is not applied here",
                       newest);
        }
      });
  watch_->Start();
  return Status::OK();
}

void TabletMapSync::Acknowledge(int64_t revision) {
  if (!fence_->Drain(std::chrono::seconds(30))) {
    spdlog::warn("tablets: requests routed by an older placement still in flight after 30 s; acknowledging anyway");
  }
  auto put = etcd_->Put(kPlacementAcksPrefix + UuidText(self_host_id_), std::to_string(revision));
  if (!put.ok()) spdlog::warn("tablets: cannot acknowledge placement revision {}: {}", revision, put.status().ToString());
}

void TabletMapSync::Stop() {
  if (watch_) watch_->Stop();
  watch_.reset();
}

// No compaction on this node purges a tombstone of a tablet in transition,
// however old: its new replica must receive it first (streaming, and writes
// to both), or the data it deletes could come back there.
void TabletMapSync::HoldTombstonesOfMovingTablets(const TableSchema& table,
                                                  const std::vector<TabletReplicas>& placement) {
  std::vector<std::pair<std::string, std::string>> moving;
  for (const TabletReplicas& p : placement) {
    if (!p.transition) continue;
    moving.emplace_back(AbsoluteKey(table.id, p.start), AbsoluteEnd(table.id, p.end));
  }
  db_->engine()->registry().SetPurgeHolds(kMigrationPurgeHold, table.id, std::move(moving));
}

// A copy of a tablet this node holds no replica of and is not receiving:
// what a move that reverted while this node (its target) was down left
// behind. Deleted before this node acknowledges any placement, so before
// any later move to it can stream; writes that reach it meanwhile as a
// pending replica are newer than the range delete, and streamed again.
void TabletMapSync::DropCopiesNotHeld() {
  for (const auto& table : db_->catalog().AllTables()) {
    auto placement = placements_->Cached(table->uuid);
    if (!placement) continue;
    for (const TabletReplicas& p : *placement) {
      if (p.transition || std::find(p.replicas.begin(), p.replicas.end(), self_host_id_) != p.replicas.end()) {
        continue;
      }
      const std::string start = AbsoluteKey(table->id, p.start);
      const std::string end = AbsoluteEnd(table->id, p.end);
      auto it = db_->engine()->NewIterator(start, end);
      it->Seek(start);
      if (!it->Valid()) continue;
      WriteSet drop;
      drop.DeleteRange(p.start, p.end);
      Status s = ApplyLocal(db_->engine(), table->id, drop);
      spdlog::info("tablets: {}.{}: dropped this node's copy of tablet {}, which it holds no replica of: {}",
                   table->keyspace, table->name, ToHex(p.start), s.ToString());
    }
  }
}

bool TabletMapSync::Apply(const std::string& table_uuid, const std::string& text, int64_t revision) {
  if (Status s = placements_->Update(table_uuid, text, revision); !s.ok()) {
    spdlog::warn("tablets: placement of table {} unreadable: {}", UuidText(table_uuid), s.ToString());
    return true;  // nothing new to apply
  }
  auto placement = placements_->Cached(table_uuid);
  std::shared_ptr<const TableSchema> table;
  for (const auto& t : db_->catalog().AllTables()) {
    if (t->uuid == table_uuid) table = t;
  }
  if (!table || !placement) return true;  // dropped, or its schema not here yet
  int splits = 0, merges = 0, races = 0;
  std::set<std::string> placed;  // absolute starts of the placement's tablets
  for (const TabletReplicas& p : *placement) placed.insert(AbsoluteKey(table->id, p.start));
  // Splits: a placement boundary inside one of this node's tablets. The
  // tablets are read again after each change (ids change), and after a race.
  for (bool again = true; again;) {
    again = false;
    for (const TabletStatus& local : db_->Tablets(*table)) {
      auto inside = placed.upper_bound(local.start);
      if (inside == placed.end() || (!local.end.empty() && *inside >= local.end)) continue;
      const Outcome o = Classify(db_->SplitTablet(*table, local.id, *inside, "split recorded in etcd by another node",
                                                  TabletChangeOrigin::kPlacement)
                                     .status(),
                                 *table);
      if (o == Outcome::kDone) ++splits;
      again = o == Outcome::kDone || (o == Outcome::kRace && ++races <= kMaxRaces);
      break;
    }
  }
  // Merges: a boundary of this node's tablets the placement no longer has.
  for (bool again = true; again;) {
    again = false;
    const auto locals = db_->Tablets(*table);
    for (size_t i = 0; i + 1 < locals.size(); ++i) {
      if (placed.count(locals[i + 1].start)) continue;
      const Outcome o = Classify(db_->MergeTablets(*table, locals[i].id, "merge recorded in etcd by another node",
                                                   TabletChangeOrigin::kPlacement)
                                     .status(),
                                 *table);
      if (o == Outcome::kDone) ++merges;
      again = o == Outcome::kDone || (o == Outcome::kRace && ++races <= kMaxRaces);
      break;
    }
  }
  if (splits + merges > 0) {
    spdlog::info("tablets: {}.{}: applied {} splits and {} merges recorded in etcd", table->keyspace, table->name,
                 splits, merges);
  }
  HoldTombstonesOfMovingTablets(*table, *placement);
  // Only a missing boundary misroutes (an extra one of this node's is a
  // merge still to come, and both sides have the same replicas). Checked
  // against the newest placement this node holds, which may be newer than `text`.
  placement = placements_->Cached(table_uuid);
  std::set<std::string> local_starts;
  for (const TabletStatus& local : db_->Tablets(*table)) local_starts.insert(local.start);
  for (const TabletReplicas& p : *placement) {
    if (!local_starts.count(AbsoluteKey(table->id, p.start))) {
      spdlog::warn("tablets: {}.{}: the placement's boundary {} is not applied here yet", table->keyspace,
                   table->name, ToHex(p.start));
      return false;
    }
  }
  return true;
}

}  // namespace tessera::cluster
