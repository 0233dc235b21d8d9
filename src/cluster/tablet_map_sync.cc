#include "cluster/tablet_map_sync.h"

#include <spdlog/spdlog.h>

#include "cluster/replica_reads.h"
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

}  // namespace

TabletMapSync::TabletMapSync(Database* db, EtcdClient* etcd, std::string etcd_endpoint, TabletPlacements* placements)
    : db_(db), etcd_(etcd), endpoint_(std::move(etcd_endpoint)), placements_(placements) {}

TabletMapSync::~TabletMapSync() { Stop(); }

Status TabletMapSync::Start() {
  TESSERA_ASSIGN_OR_RETURN(EtcdRangeResult all, etcd_->Range(kTabletsPrefix, EtcdPrefixEnd(kTabletsPrefix)));
  for (const auto& kv : all.kvs) {
    const std::string uuid = TableUuidOf(kv.key);
    if (!uuid.empty()) Apply(uuid, kv.value);
  }
  watch_ = std::make_unique<EtcdWatch>(
      endpoint_, kTabletsPrefix, EtcdPrefixEnd(kTabletsPrefix), all.revision + 1,
      [this](const std::vector<EtcdWatchEvent>& events, int64_t) {
        for (const auto& e : events) {
          const std::string uuid = TableUuidOf(e.kv.key);
          if (e.type == EtcdWatchEvent::Type::kPut && !uuid.empty()) Apply(uuid, e.kv.value);
        }
      });
  watch_->Start();
  return Status::OK();
}

void TabletMapSync::Stop() {
  if (watch_) watch_->Stop();
  watch_.reset();
}

int TabletMapSync::Apply(const std::string& table_uuid, const std::string& text) {
  if (Status s = placements_->Update(table_uuid, text); !s.ok()) {
    spdlog::warn("tablets: placement of table {} unreadable: {}", UuidText(table_uuid), s.ToString());
    return 0;
  }
  auto placement = placements_->Cached(table_uuid);
  std::shared_ptr<const TableSchema> table;
  for (const auto& t : db_->catalog().AllTables()) {
    if (t->uuid == table_uuid) table = t;
  }
  if (!table || !placement) return 0;  // dropped, or its schema not here yet
  int splits = 0;
  for (const TabletReplicas& p : *placement) {
    if (p.start.empty()) continue;
    const std::string boundary = AbsoluteKey(table->id, p.start);
    for (const TabletStatus& local : db_->Tablets(*table)) {
      if (local.start == boundary) break;
      if (!(local.start < boundary && (local.end.empty() || boundary < local.end))) continue;
      auto split = db_->SplitTablet(*table, local.id, boundary, "split recorded in etcd by another node");
      if (split.ok()) {
        ++splits;
      } else {
        spdlog::warn("tablets: {}.{}: cannot apply a split recorded in etcd: {}", table->keyspace, table->name,
                     split.status().ToString());
      }
      break;
    }
  }
  if (splits > 0) {
    spdlog::info("tablets: {}.{}: applied {} splits recorded in etcd", table->keyspace, table->name, splits);
  }
  return splits;
}

}  // namespace tessera::cluster
