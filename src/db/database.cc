#include "db/database.h"

#include "common/failpoints.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "common/bytes.h"
#include "common/steady_micros.h"
#include "db/mutation_builder.h"
#include "keys/storage_key.h"
#include "tablets/top_k.h"
#include "types/value_literal.h"

namespace tessera {
namespace {

constexpr size_t kMaxEvents = 1000;
constexpr size_t kHotPartitionCapacity = 256;  // counters per table and direction
constexpr size_t kMaxSampledPartitions = 4096;

std::string TabletsKey(uint32_t table_id) {
  std::string k = "tablets/";
  PutBigEndian32(&k, table_id);
  return k;
}

}  // namespace

struct Database::PartitionLoad {
  std::mutex mu;
  TopK writes{kHotPartitionCapacity};
  TopK reads{kHotPartitionCapacity};
  TopK write_bytes{kHotPartitionCapacity};  // feeds the large-partition tracker
};

namespace {

// Records the duration of a read into the table's histogram when it goes out of scope.
class ReadTimer {
 public:
  explicit ReadTimer(std::shared_ptr<TableMetrics> m) : metrics_(std::move(m)), start_(SteadyMicros()) {}
  ~ReadTimer() { metrics_->read_latency.Record(SteadyMicros() - start_); }

 private:
  std::shared_ptr<TableMetrics> metrics_;
  int64_t start_;
};

}  // namespace

Database::Database(std::unique_ptr<StorageEngine> engine, const DatabaseOptions& options)
    : engine_(std::move(engine)),
      vector_indexes_(std::make_unique<VectorIndexes>(engine_.get())),
      local_replica_(std::make_shared<LocalReplica>(engine_.get())),
      catalog_(engine_.get()),
      guardrails_(options.guardrails),
      balancer_options_(options.balancer),
      failpoints_(options.failpoints),
      defer_balancer_(options.defer_balancer),
      large_partitions_(options.guardrails) {
  engine_->SetWriteObserver([indexes = vector_indexes_.get()](const WriteSet& ws) { indexes->OnWrite(ws); });
}

Database::~Database() {
  if (balancer_) balancer_->Stop();
  engine_->SetWriteObserver(nullptr);
}

Result<std::unique_ptr<Database>> Database::Open(const DatabaseOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) return Status::IOError("cannot create " + options.data_dir + ": " + ec.message());
  StorageOptions so;
  so.path = options.data_dir;
  so.commitlog_sync = options.commitlog_sync;
  so.commitlog_sync_period_micros = options.commitlog_sync_period_micros;
  so.commitlog_sync_group_window_micros = options.commitlog_sync_group_window_micros;
  so.failpoints = options.failpoints;
  so.block_cache_bytes = options.block_cache_bytes;
  so.max_successive_merges = options.max_successive_merges;
  so.clock_micros = options.clock_micros;
  TESSERA_ASSIGN_OR_RETURN(auto engine, StorageEngine::Open(so));
  std::unique_ptr<Database> db(new Database(std::move(engine), options));
  TESSERA_RETURN_IF_ERROR(db->catalog_.Load());
  TESSERA_RETURN_IF_ERROR(db->LoadTablets());
  TESSERA_ASSIGN_OR_RETURN(db->sequences_, Sequences::Open(db->engine_.get()));
  if (options.balancer.enabled) {
    db->balancer_ = std::make_unique<TabletBalancer>(db.get(), options.balancer);
    if (!options.defer_balancer) db->balancer_->Start();
  }
  db->RefreshVectorIndexes();
  return db;
}

void Database::StartBalancer() {
  if (!defer_balancer_) return;
  if (balancer_) balancer_->Start();
}

Status Database::LoadTablets() {
  for (const auto& table : catalog_.AllTables()) {
    std::string doc;
    Status s = engine_->MetaGet(TabletsKey(table->id), &doc);
    if (s.IsNotFound()) {
      TESSERA_RETURN_IF_ERROR(PublishTablets(TabletMap::Create(*table, NowMicros())));
      continue;
    }
    TESSERA_RETURN_IF_ERROR(s);
    TESSERA_ASSIGN_OR_RETURN(TabletMap map, TabletMap::FromJson(doc));
    std::lock_guard<std::mutex> lock(tablets_mu_);
    tablet_maps_[table->id] = std::make_shared<const TabletMap>(std::move(map));
  }
  return Status::OK();
}

std::shared_ptr<const TabletMap> Database::TabletsOf(uint32_t table_id) const {
  std::lock_guard<std::mutex> lock(tablets_mu_);
  auto it = tablet_maps_.find(table_id);
  return it == tablet_maps_.end() ? nullptr : it->second;
}

void Database::AttachPlacementView(TabletPlacementView* placement) {
  std::lock_guard<std::mutex> admin(admin_mu_);  // no split or merge consults the view meanwhile
  placement_.store(placement, std::memory_order_release);
}

bool Database::StoredHere(const TableSchema& table, const Tablet& tablet) const {
  TabletPlacementView* placement = placement_.load(std::memory_order_acquire);
  return !placement || placement->StoredHere(table, tablet);
}

Status Database::PublishTablets(TabletMap map) {
  TESSERA_RETURN_IF_ERROR(engine_->MetaPut(TabletsKey(map.table_id()), map.ToJson()));
  auto ptr = std::make_shared<const TabletMap>(std::move(map));
  std::lock_guard<std::mutex> lock(tablets_mu_);
  tablet_maps_[ptr->table_id()] = std::move(ptr);
  return Status::OK();
}

// --- Schema ---

Status Database::CreateKeyspace(const KeyspaceMetadata& ks, bool if_not_exists) {
  Status s = catalog_.CreateKeyspace(ks);
  return s.IsAlreadyExists() && if_not_exists ? Status::OK() : s;
}

Status Database::RemoveTableData(const TableSchema& table) {
  WriteSet ws;
  ws.DeleteRange(TablePrefix(table.id), TablePrefix(table.id + 1));
  return engine_->Write(ws);
}

Status Database::DropKeyspace(const std::string& name, bool if_exists) {
  std::lock_guard<std::mutex> admin(admin_mu_);
  auto dropped = catalog_.DropKeyspace(name);
  if (!dropped.ok()) return dropped.status().IsNotFound() && if_exists ? Status::OK() : dropped.status();
  TESSERA_RETURN_IF_ERROR(sequences_->DropKeyspace(name));
  for (const auto& t : *dropped) {
    TESSERA_RETURN_IF_ERROR(RemoveTableData(*t));
    TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(TabletsKey(t->id)));
    large_partitions_.ForgetTable(t->id);
    std::lock_guard<std::mutex> lock(tablets_mu_);
    tablet_maps_.erase(t->id);
  }
  RefreshVectorIndexes();
  return Status::OK();
}

Result<std::shared_ptr<const TableSchema>> Database::CreateTable(TableSchema table, bool if_not_exists) {
  std::lock_guard<std::mutex> admin(admin_mu_);
  const std::string keyspace = table.keyspace, name = table.name;
  auto created = catalog_.CreateTable(std::move(table));
  if (!created.ok()) {
    if (created.status().IsAlreadyExists() && if_not_exists) return catalog_.GetTable(keyspace, name);
    return created.status();
  }
  TESSERA_RETURN_IF_ERROR(PublishTablets(TabletMap::Create(**created, NowMicros())));
  return created;
}

Result<std::shared_ptr<const TableSchema>> Database::AlterTable(TableSchema table) {
  return catalog_.AlterTable(std::move(table));
}

Status Database::DropTable(const std::string& keyspace, const std::string& name, bool if_exists) {
  std::lock_guard<std::mutex> admin(admin_mu_);
  auto table = catalog_.GetTable(keyspace, name);
  if (!table.ok()) return table.status().IsNotFound() && if_exists ? Status::OK() : table.status();
  // A table's secondary indexes go with it (Cassandra drops them too).
  for (const IndexDef& index : (*table)->indexes) {
    if (index.is_vector()) continue;  // no backing table: its entries go with the rows
    Status s = DropTableLocked(keyspace, index.backing_table);
    if (!s.ok() && !s.IsNotFound()) return s;
  }
  TESSERA_RETURN_IF_ERROR(DropTableLocked(keyspace, name));
  RefreshVectorIndexes();
  return Status::OK();
}

Status Database::DropTableLocked(const std::string& keyspace, const std::string& name) {
  auto dropped = catalog_.DropTable(keyspace, name);
  if (!dropped.ok()) return dropped.status();
  TESSERA_RETURN_IF_ERROR(RemoveTableData(**dropped));
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(TabletsKey((*dropped)->id)));
  large_partitions_.ForgetTable((*dropped)->id);
  std::lock_guard<std::mutex> lock(tablets_mu_);
  tablet_maps_.erase((*dropped)->id);
  return Status::OK();
}

std::vector<std::string> Database::TruncatedWith(const TableSchema& table) {
  std::vector<std::string> out;
  for (const IndexDef& index : table.indexes) {
    if (!index.is_vector()) out.push_back(index.backing_table);
  }
  out.insert(out.end(), table.views.begin(), table.views.end());
  return out;
}

Status Database::TruncateTable(const std::string& keyspace, const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(auto table, catalog_.GetTable(keyspace, name));
  for (const std::string& derived : TruncatedWith(*table)) {
    Status s = TruncateTable(keyspace, derived);
    if (!s.ok() && !s.IsNotFound()) return s;
  }
  large_partitions_.ForgetTable(table->id);
  return RemoveTableData(*table);
}

Result<std::shared_ptr<const TableSchema>> Database::GetTable(const std::string& keyspace,
                                                              const std::string& name) const {
  return catalog_.GetTable(keyspace, name);
}

// --- Data ---

int64_t Database::NextTimestamp() {
  int64_t now = NowMicros();
  int64_t last = last_timestamp_.load(std::memory_order_relaxed);
  for (;;) {
    int64_t next = std::max(now, last + 1);
    if (last_timestamp_.compare_exchange_weak(last, next, std::memory_order_relaxed)) return next;
  }
}

void Database::CountWrittenPartition(uint32_t table_id, std::string_view position, uint64_t rows, uint64_t bytes) {
  auto load = LoadOf(table_id);
  uint64_t rows_estimate = 0, bytes_estimate = 0;
  {
    std::lock_guard<std::mutex> lock(load->mu);
    rows_estimate = load->writes.Add(position, std::max<uint64_t>(rows, 1));
    bytes_estimate = load->write_bytes.Add(position, bytes);
  }
  large_partitions_.NoteWrite(table_id, position, rows_estimate, bytes_estimate);
}

ReadContext Database::MakeReadContext(const std::shared_ptr<const TableSchema>& table,
                                      const RequestConsistency& consistency) {
  ReadContext ctx;
  ctx.table = table;
  ctx.consistency = consistency;
  const uint32_t id = table->id;
  ctx.tablets = [this, id] { return TabletsOf(id); };
  ctx.replica_of = [replica = local_replica_](const Tablet&) { return replica; };
  ctx.now_micros = NowMicros();
  ctx.count_partition_read = [this, id](std::string_view position) {
    CountPartition(id, position, /*write=*/false, 1);
  };
  return ctx;
}

std::shared_ptr<Database::PartitionLoad> Database::LoadOf(uint32_t table_id) {
  std::lock_guard<std::mutex> lock(load_mu_);
  auto& p = load_[table_id];
  if (!p) p = std::make_shared<PartitionLoad>();
  return p;
}

void Database::CountPartition(uint32_t table_id, std::string_view position, bool write, uint64_t n) {
  if (n == 0) return;
  auto load = LoadOf(table_id);
  std::lock_guard<std::mutex> lock(load->mu);
  (write ? load->writes : load->reads).Add(position, n);
}

std::vector<HotPartition> Database::HotPartitions(const TableSchema& table, bool writes, size_t n, uint64_t* total) {
  auto load = LoadOf(table.id);
  std::vector<TopK::Entry> top;
  {
    std::lock_guard<std::mutex> lock(load->mu);
    const TopK& sketch = writes ? load->writes : load->reads;
    top = sketch.Top(n);
    *total = sketch.total();
  }
  std::vector<HotPartition> out;
  for (const auto& e : top) {
    auto pk = DecodePartitionPosition(table, e.key);
    if (pk.ok()) out.push_back(HotPartition{std::move(pk).value(), e.count, e.error});
  }
  return out;
}


Status Database::HitReadFailpoint(const TableSchema& table) {
  if (failpoints_ == nullptr || !failpoints_->armed()) return Status::OK();  // no name built on the hot path
  return HitFailpoint("replica.read." + table.keyspace + "." + table.name);
}

Status Database::HitFailpoint(const std::string& name) {
  if (failpoints_ == nullptr || !failpoints_->armed()) return Status::OK();
  return failpoints_->Hit(name);
}

Result<std::optional<RowResult>> Database::ReadRow(const std::shared_ptr<const TableSchema>& table,
                                                   const std::vector<std::string>& pk,
                                                   const std::vector<std::string>& ck,
                                                   const RequestConsistency& consistency) {
  if (!TabletsOf(table->id)) return Status::NotFound("table " + table->name + " was dropped");
  TESSERA_RETURN_IF_ERROR(HitReadFailpoint(*table));
  ReadTimer timer(MetricsOf(table->id));
  return tessera::ReadRow(MakeReadContext(CurrentLayout(table), consistency), pk, ck);
}

void Database::ReadRowAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& pk,
                            const std::vector<std::string>& ck, const RequestConsistency& consistency, RowDone done) {
  if (!TabletsOf(table->id)) return done(Status::NotFound("table " + table->name + " was dropped"));
  Status held = HitReadFailpoint(*table);
  if (!held.ok()) return done(held);
  tessera::ReadRowAsync(MakeReadContext(CurrentLayout(table), consistency), pk, ck,
                        [metrics = MetricsOf(table->id), start = SteadyMicros(),
                         done = std::move(done)](Result<std::optional<RowResult>> row) {
                          metrics->read_latency.Record(SteadyMicros() - start);
                          done(std::move(row));
                        });
}

void Database::ReadSliceAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& pk,
                              const SliceRequest& request, const RequestConsistency& consistency, SliceDone done) {
  if (!TabletsOf(table->id)) return done(Status::NotFound("table " + table->name + " was dropped"));
  Status held = HitReadFailpoint(*table);
  if (!held.ok()) return done(held);
  tessera::ReadSliceAsync(MakeReadContext(CurrentLayout(table), consistency), pk, request,
                          [metrics = MetricsOf(table->id), start = SteadyMicros(),
                           done = std::move(done)](Result<SliceResult> slice) {
                            metrics->read_latency.Record(SteadyMicros() - start);
                            done(std::move(slice));
                          });
}

Result<SliceResult> Database::ReadSlice(const std::shared_ptr<const TableSchema>& table,
                                        const std::vector<std::string>& pk, const SliceRequest& request,
                                        const RequestConsistency& consistency) {
  if (!TabletsOf(table->id)) return Status::NotFound("table " + table->name + " was dropped");
  TESSERA_RETURN_IF_ERROR(HitReadFailpoint(*table));
  ReadTimer timer(MetricsOf(table->id));
  return tessera::ReadSlice(MakeReadContext(CurrentLayout(table), consistency), pk, request);
}

Result<RangeResult> Database::ScanRange(const std::shared_ptr<const TableSchema>& table, const RangeRequest& request,
                                        const RequestConsistency& consistency) {
  if (!TabletsOf(table->id)) return Status::NotFound("table " + table->name + " was dropped");
  TESSERA_RETURN_IF_ERROR(HitReadFailpoint(*table));
  ReadTimer timer(MetricsOf(table->id));
  return tessera::ScanRange(MakeReadContext(CurrentLayout(table), consistency), request);
}

void Database::ScanRangeAsync(const std::shared_ptr<const TableSchema>& table, const RangeRequest& request,
                              const RequestConsistency& consistency, RangeDone done) {
  if (!TabletsOf(table->id)) return done(Status::NotFound("table " + table->name + " was dropped"));
  Status held = HitReadFailpoint(*table);
  if (!held.ok()) return done(held);
  tessera::ScanRangeAsync(MakeReadContext(CurrentLayout(table), consistency), request,
                          [metrics = MetricsOf(table->id), start = SteadyMicros(),
                           done = std::move(done)](Result<RangeResult> page) {
                            metrics->read_latency.Record(SteadyMicros() - start);
                            done(std::move(page));
                          });
}

// --- Tablets ---

std::vector<Database::TabletRange> Database::TabletRanges(const TableSchema& table) {
  std::vector<TabletRange> out;
  auto map = TabletsOf(table.id);
  if (!map) return out;
  for (const auto& t : map->tablets()) out.push_back({t.start, t.end, StoredHere(table, t)});
  return out;
}

std::vector<TabletStatus> Database::Tablets(const TableSchema& table) {
  std::vector<TabletStatus> out;
  auto map = TabletsOf(table.id);
  if (!map) return out;
  uint64_t keys = engine_->IntProperty("rocksdb.estimate-num-keys");
  uint64_t total = engine_->ApproximateSize(std::string(), std::string(8, '\xff'));
  double avg = keys > 0 && total > 0 ? static_cast<double>(total) / static_cast<double>(keys) : 0.0;
  TabletPlacementView* placement = placement_.load(std::memory_order_acquire);
  std::map<TabletId, std::string> holds;
  for (const auto& h : TabletHolds()) {
    if (h.table_id == table.id) holds[h.tablet] = "hold: " + h.condition;
  }
  const int64_t now = NowMicros();
  for (const auto& t : map->tablets()) {
    TabletStatus s;
    s.id = t.id;
    s.start = t.start;
    s.end = t.end;
    s.created_micros = t.created_micros;
    const TabletCounters& c = *t.counters;
    s.reads = c.reads;
    s.writes = c.writes;
    s.bytes_read = c.bytes_read;
    s.bytes_written = c.bytes_written;
    const int64_t since = t.rates_since_micros();
    s.reads_per_second = c.read_rate.Rate(now, since);
    s.writes_per_second = c.write_rate.Rate(now, since);
    s.read_bytes_per_second = c.read_bytes_rate.Rate(now, since);
    s.write_bytes_per_second = c.write_bytes_rate.Rate(now, since);
    s.replica_reads_per_second = c.replica_read_rate.Rate(now, since);
    s.replica_writes_per_second = c.replica_write_rate.Rate(now, since);
    s.size_bytes = engine_->ApproximateSize(t.start, t.end);  // this node's copy
    if (placement) s.replicas = placement->Hosts(table, t);
    s.rows_estimate = avg > 0 ? static_cast<uint64_t>(static_cast<double>(s.size_bytes) / avg) : 0;
    if (auto h = holds.find(t.id); h != holds.end()) {
      s.state = h->second;
    } else if (s.reads_per_second + s.writes_per_second > balancer_options_.split_rows_per_second ||
               s.read_bytes_per_second + s.write_bytes_per_second > balancer_options_.split_bytes_per_second) {
      s.state = "hot";
    }
    out.push_back(std::move(s));
  }
  return out;
}

TableLoad Database::TabletLoads(const TableSchema& table) {
  TableLoad load;
  load.table_id = table.id;
  load.hash = table.distribution == Distribution::kHash;
  load.sub_partitions = table.partition_buckets.enabled();
  load.min_tablets = load.hash ? table.options.initial_tablets : 1;
  auto map = TabletsOf(table.id);
  if (!map) return load;
  const int64_t now = NowMicros();
  for (const auto& t : map->tablets()) {
    const TabletCounters& c = *t.counters;
    TabletLoad l;
    l.id = t.id;
    l.start = t.start;
    l.end = t.end;
    l.age_micros = now - t.created_micros;
    // This node's share only, whoever serves the tablet (Replica::ApproximateSize).
    l.size_bytes = local_replica_->ApproximateSize(t.start, t.end);
    l.flushed_bytes = local_replica_->ApproximateSize(t.start, t.end, /*include_memtables=*/false);
    // Coordinated here or stored here, whichever is more: a node that stores
    // a tablet others coordinate must see its copy grow (the size check's
    // trigger, TabletBalancer::VerifySizes).
    l.bytes_written = std::max(c.bytes_written.load(), c.replica_bytes_written.load());
    const int64_t since = t.rates_since_micros();
    l.writes_per_second = c.write_rate.Rate(now, since);
    l.rows_per_second = c.read_rate.Rate(now, since) + l.writes_per_second;
    l.bytes_per_second = c.read_bytes_rate.Rate(now, since) + c.write_bytes_rate.Rate(now, since);
    l.sample = c.sample.Take(now);
    load.tablets.push_back(std::move(l));
  }
  return load;
}

std::vector<TabletHold> Database::TabletHolds() const {
  return balancer_ ? balancer_->Holds() : std::vector<TabletHold>{};
}

Result<size_t> Database::ReclaimDeletedRanges() {
  size_t done = 0;
  for (const auto& [begin, end] : engine_->TakeDeletedRanges()) {
    TESSERA_RETURN_IF_ERROR(engine_->Compact(begin, end));
    ++done;
  }
  return done;
}

Result<uint64_t> Database::MeasureTabletBytes(const TableSchema& table, TabletId id, uint64_t limit) {
  auto map = TabletsOf(table.id);
  const Tablet* tablet = map ? map->FindById(id) : nullptr;
  if (!tablet) return Status::NotFound("no tablet " + std::to_string(id) + " in " + table.name);
  uint64_t bytes = 0;
  auto it = OwnCopyIterator(table, *tablet, tablet->start, tablet->end);
  if (!it) return Status::NotFound("this node stores no copy of tablet " + std::to_string(id) + " of " + table.name);
  for (it->Seek(tablet->start); it->Valid() && bytes <= limit; it->Next()) {
    bytes += it->key().size() + it->value().size();
  }
  TESSERA_RETURN_IF_ERROR(it->status());
  return bytes;
}

Result<LargePartition> Database::MeasurePartition(const TableSchema& table, const std::string& position) {
  constexpr uint64_t kMaxVisited = 10'000'000;
  LargePartition m;
  m.table_id = table.id;
  m.position = position;
  m.measured_micros = NowMicros();
  std::string end;
  if (!PrefixSuccessor(position, &end)) return Status::InvalidArgument("empty partition position");
  auto map = TabletsOf(table.id);
  if (!map) return Status::NotFound("table " + table.name + " was dropped");
  const Tablet& tablet = map->Find(position);
  // This node's own copy: the store reads nothing from other nodes.
  auto it = OwnCopyIterator(table, tablet, position, end);
  if (!it) return Status::NotFound("this node stores no copy of the partition's tablet of " + table.name);
  // A partition-bucketed partition's sub-partitions all start with its (logical) position.
  const size_t kind_at = position.size() + (table.partition_buckets.enabled() ? kSubPartitionBytes : 0);
  for (it->Seek(position); it->Valid() && m.rows < kMaxVisited; it->Next()) {
    m.bytes += it->key().size() + it->value().size();
    if (it->key().size() > kind_at && static_cast<KeyKind>(it->key()[kind_at]) == KeyKind::kRow) ++m.rows;
  }
  TESSERA_RETURN_IF_ERROR(it->status());
  return m;
}

void Database::RecordTombstoneRead(const TableSchema& table, uint64_t tombstones, uint64_t live_rows) {
  std::lock_guard<std::mutex> lock(reports_mu_);
  TombstoneReport& r = tombstone_reports_[table.id];
  ++r.reads;
  if (tombstones >= r.max_tombstones) {
    r.max_tombstones = tombstones;
    r.live_rows_at_max = live_rows;
  }
  r.last_micros = NowMicros();
}

std::map<uint32_t, TombstoneReport> Database::TombstoneReports() const {
  std::lock_guard<std::mutex> lock(reports_mu_);
  return tombstone_reports_;
}

std::shared_ptr<TableMetrics> Database::MetricsOf(uint32_t table_id) {
  std::lock_guard<std::mutex> lock(reports_mu_);
  auto& m = metrics_[table_id];
  if (!m) m = std::make_shared<TableMetrics>();
  return m;
}

std::optional<std::string> Database::MiddleToken(const TableSchema& table, const Tablet& tablet) {
  if (table.distribution != Distribution::kHash) return std::nullopt;
  const std::string prefix = TablePrefix(table.id);
  auto token_of = [&](const std::string& bound, bool is_end) -> __int128 {
    if (bound.size() < prefix.size() + 8) return is_end ? (__int128{1} << 63) : -(__int128{1} << 63);
    return DecodeToken(std::string_view(bound).substr(prefix.size(), 8));
  };
  __int128 lo = token_of(tablet.start, false), hi = token_of(tablet.end, true);
  auto mid = static_cast<Token>(lo + (hi - lo) / 2);
  std::string candidate = prefix + EncodeToken(mid);
  if (tablet.start < candidate && candidate < tablet.end) return candidate;
  return std::nullopt;
}

Result<std::string> Database::MedianPartition(const TableSchema& table, const Tablet& tablet, KvIterator* it) {
  // The median partition among (up to kMaxSampledPartitions of) those stored,
  // found by jumping from partition to partition.
  std::vector<std::string> positions;
  for (it->Seek(tablet.start); it->Valid() && positions.size() < kMaxSampledPartitions;) {
    TESSERA_ASSIGN_OR_RETURN(size_t n, PartitionPositionSize(table, it->key()));
    positions.emplace_back(it->key().substr(0, n));
    std::string next;
    if (!PrefixSuccessor(positions.back(), &next)) break;
    it->Seek(next);
  }
  TESSERA_RETURN_IF_ERROR(it->status());
  if (positions.size() < 2) {
    return Status::InvalidArgument("tablet " + std::to_string(tablet.id) +
                                   " holds fewer than two partitions; a partition is never split");
  }
  return positions[positions.size() / 2];
}

Result<std::string> Database::MiddleOf(const TableSchema& table, const Tablet& tablet) {
  if (auto token = MiddleToken(table, tablet)) return *token;
  TESSERA_RETURN_IF_ERROR(HitFailpoint("tablets.median_read"));
  auto it = OwnCopyIterator(table, tablet, tablet.start, tablet.end);
  if (!it) return Status::NotFound("this node stores no copy of tablet " + std::to_string(tablet.id) + " of " + table.name);
  return MedianPartition(table, tablet, it.get());
}

Result<std::string> Database::MiddleSplitPosition(const TableSchema& table, TabletId id) {
  auto snapshot = TabletsOf(table.id);
  if (!snapshot) return Status::NotFound("table " + table.name + " has no tablets");
  const Tablet* tablet = snapshot->FindById(id);
  if (!tablet) return Status::NotFound("no tablet " + std::to_string(id) + " in " + table.name);
  return MiddleOf(table, *tablet);
}

std::unique_ptr<KvIterator> Database::OwnCopyIterator(const TableSchema& table, const Tablet& tablet, std::string lower,
                                                      std::string upper) {
  // A node's housekeeping counts what it stores itself (the tablet's
  // replicas hold the same rows).
  if (!StoredHere(table, tablet)) return nullptr;
  return engine_->NewIterator(std::move(lower), std::move(upper));
}

Result<std::pair<TabletId, TabletId>> Database::SplitTablet(const TableSchema& table, TabletId id,
                                                            std::optional<std::string> split_position,
                                                            const std::string& reason,
                                                            const TabletChangeSource& source) {
  std::string split;
  if (!split_position) {
    // The median partition is found by reading this node's copy of the
    // tablet, seconds for a big one. Not under admin_mu_, which DDL (a table another node created, applied
    // here) and every other split and merge wait for.
    auto snapshot = TabletsOf(table.id);
    if (!snapshot) return Status::NotFound("table " + table.name + " has no tablets");
    const Tablet* tablet = snapshot->FindById(id);
    if (!tablet) return Status::NotFound("no tablet " + std::to_string(id) + " in " + table.name);
    TESSERA_ASSIGN_OR_RETURN(split, MiddleOf(table, *tablet));
  }
  std::lock_guard<std::mutex> admin(admin_mu_);
  auto current = TabletsOf(table.id);
  if (!current) return Status::NotFound("table " + table.name + " has no tablets");
  const Tablet* tablet = current->FindById(id);  // gone meanwhile: split or merged by another caller
  if (!tablet) return Status::NotFound("no tablet " + std::to_string(id) + " in " + table.name);
  if (split_position) {
    // Must be a partition boundary: a token prefix, a bucket start or a whole partition position.
    split = *split_position;
    const size_t token_prefix = 4 + (table.distribution == Distribution::kHash ? 8 : 0);
    const bool bucket_start = table.buckets.enabled() && split.size() == 6 && split.starts_with(TablePrefix(table.id));
    if (!bucket_start && (split.size() != token_prefix || table.distribution != Distribution::kHash)) {
      auto n = PartitionPositionSize(table, split + static_cast<char>(KeyKind::kRow));
      if (!n.ok() || *n != split.size()) return Status::InvalidArgument("split position is not a partition boundary");
    }
  }
  if (auto* placement = placement_.load()) {
    TESSERA_RETURN_IF_ERROR(placement->BeforeSplit(table, *tablet, split, source));
  }
  TabletMap next = *current;
  TESSERA_ASSIGN_OR_RETURN(auto ids, next.Split(id, split, NowMicros()));
  TESSERA_RETURN_IF_ERROR(PublishTablets(std::move(next)));
  const int64_t now = NowMicros();
  RetireTablet(table.id, *tablet, now);
  RecordTabletEvent({now, table.id, "split", {id}, {ids.first, ids.second}, reason});
  return ids;
}

Result<TabletId> Database::MergeTablets(const TableSchema& table, TabletId left, const std::string& reason,
                                        const TabletChangeSource& source) {
  std::lock_guard<std::mutex> admin(admin_mu_);
  auto current = TabletsOf(table.id);
  if (!current) return Status::NotFound("table " + table.name + " has no tablets");
  TabletMap next = *current;
  const auto& ts = current->tablets();
  auto pos = std::find_if(ts.begin(), ts.end(), [&](const Tablet& t) { return t.id == left; });
  TabletId right = (pos != ts.end() && std::next(pos) != ts.end()) ? std::next(pos)->id : 0;
  if (auto* placement = placement_.load(); placement && right != 0) {
    TESSERA_RETURN_IF_ERROR(placement->BeforeMerge(table, *pos, *std::next(pos), source));
  }
  TESSERA_ASSIGN_OR_RETURN(TabletId merged, next.Merge(left, NowMicros()));
  TESSERA_RETURN_IF_ERROR(PublishTablets(std::move(next)));
  const int64_t now = NowMicros();
  for (const TabletId id : {left, right}) {
    if (const Tablet* t = current->FindById(id)) RetireTablet(table.id, *t, now);
  }
  RecordTabletEvent({now, table.id, "merge", {left, right}, {merged}, reason});
  return merged;
}

void Database::CountReplicaRequest(uint32_t table_id, std::string_view key, bool write, uint64_t bytes) {
  auto map = TabletsOf(table_id);
  if (!map) return;
  map->Find(key).counters->CountReplicaRequest(NowMicros(), write, bytes);
  auto metrics = MetricsOf(table_id);
  ++(write ? metrics->replica_writes : metrics->replica_reads);
}

void Database::RecordTabletEvent(TabletEvent e) {
  if (e.kind == "split") ++MetricsOf(e.table_id)->splits;
  if (e.kind == "merge") ++MetricsOf(e.table_id)->merges;
  std::lock_guard<std::mutex> lock(events_mu_);
  events_.push_back(std::move(e));
  if (events_.size() > kMaxEvents) events_.pop_front();
}

void Database::RetireTablet(uint32_t table_id, const Tablet& t, int64_t at_micros) {
  const TabletCounters& c = *t.counters;
  RetiredTablet r{0, table_id, t.id, t.start, t.end, at_micros, c.reads, c.writes, c.bytes_read, c.bytes_written};
  std::lock_guard<std::mutex> lock(events_mu_);
  r.sequence = ++retired_sequence_;
  retired_.push_back(std::move(r));
  if (retired_.size() > kMaxRetiredTablets) retired_.pop_front();
}

std::vector<RetiredTablet> Database::RetiredTablets(uint64_t after_sequence) const {
  std::lock_guard<std::mutex> lock(events_mu_);
  std::vector<RetiredTablet> out;
  for (const auto& r : retired_) {
    if (r.sequence > after_sequence) out.push_back(r);
  }
  return out;
}

std::vector<TabletEvent> Database::TabletEvents() const {
  std::lock_guard<std::mutex> lock(events_mu_);
  return {events_.begin(), events_.end()};
}

Status Database::Compact() {
  TESSERA_RETURN_IF_ERROR(engine_->Flush());
  // The whole key space: only a full compaction may purge partition and range
  // tombstones (storage/compaction_filter.h).
  return engine_->Compact();
}

}  // namespace tessera
