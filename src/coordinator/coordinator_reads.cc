// Coordinator (coordinator/coordinator.h): reads sent to the replicas the
// attached resolver chooses (db/reader.h's algorithms over a ReadContext whose
// replica_of is the coordinator's), or on a single node this node's replica
// through Database directly; Paxos rounds and ANN candidates of other nodes.
#include "common/steady_micros.h"
#include "common/blocking_wait.h"
#include "coordinator/coordinator.h"
#include "keys/storage_key.h"

namespace tessera {
namespace {

Status Dropped(const TableSchema& table) { return Status::NotFound("table " + table.name + " was dropped"); }

// Records a read's latency in its table's metrics when it answers.
template <typename T>
std::function<void(T)> Timed(std::shared_ptr<TableMetrics> metrics, std::function<void(T)> done) {
  return [metrics = std::move(metrics), start = SteadyMicros(), done = std::move(done)](T result) {
    metrics->read_latency.Record(SteadyMicros() - start);
    done(std::move(result));
  };
}

}  // namespace

void Coordinator::AttachReplicaResolver(ReplicaResolver* resolver) {
  resolver_.store(resolver, std::memory_order_release);
}

std::shared_ptr<Replica> Coordinator::ReplicaOf(const std::shared_ptr<const TableSchema>& table,
                                                const Tablet& tablet) const {
  if (ReplicaResolver* resolver = resolver_.load(std::memory_order_acquire)) {
    if (auto chosen = resolver->ReplicaFor(table, tablet)) return chosen;
  }
  return db_->local_replica();
}

ReadContext Coordinator::ContextOf(const std::shared_ptr<const TableSchema>& table,
                                   const RequestConsistency& consistency) const {
  auto layout = db_->CurrentLayout(table);
  ReadContext ctx = db_->MakeReadContext(layout, consistency);
  ctx.replica_of = [this, layout](const Tablet& t) { return ReplicaOf(layout, t); };
  return ctx;
}

Result<std::optional<RowResult>> Coordinator::ReadRow(const std::shared_ptr<const TableSchema>& table,
                                                      const std::vector<std::string>& pk,
                                                      const std::vector<std::string>& ck,
                                                      const RequestConsistency& consistency) {
  if (!replicated()) return db_->ReadRow(table, pk, ck, consistency);
  return WaitFor<Result<std::optional<RowResult>>>(
      [&](RowDone done) { ReadRowAsync(table, pk, ck, consistency, std::move(done)); });
}

void Coordinator::ReadRowAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& pk,
                               const std::vector<std::string>& ck, const RequestConsistency& consistency,
                               RowDone done) {
  if (!replicated()) return db_->ReadRowAsync(table, pk, ck, consistency, std::move(done));
  if (!db_->TabletsOf(table->id)) return done(Dropped(*table));
  if (Status held = db_->HitReadFailpoint(*table); !held.ok()) return done(held);
  tessera::ReadRowAsync(ContextOf(table, consistency), pk, ck,
                        Timed<Result<std::optional<RowResult>>>(db_->MetricsOf(table->id), std::move(done)));
}

Result<SliceResult> Coordinator::ReadSlice(const std::shared_ptr<const TableSchema>& table,
                                           const std::vector<std::string>& pk, const SliceRequest& request,
                                           const RequestConsistency& consistency) {
  if (!replicated()) return db_->ReadSlice(table, pk, request, consistency);
  // The slice read without a thread beats the blocking one, whose header,
  // static row and rows cost three round trips one after the other where
  // its first request to each replica brings all three (bench/RESULTS.md,
  // "A slice asks each replica once"); this caller holds its thread.
  return WaitFor<Result<SliceResult>>(
      [&](SliceDone done) { ReadSliceAsync(table, pk, request, consistency, std::move(done)); });
}

void Coordinator::ReadSliceAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& pk,
                                 const SliceRequest& request, const RequestConsistency& consistency,
                                 SliceDone done) {
  if (!replicated()) return db_->ReadSliceAsync(table, pk, request, consistency, std::move(done));
  if (!db_->TabletsOf(table->id)) return done(Dropped(*table));
  if (Status held = db_->HitReadFailpoint(*table); !held.ok()) return done(held);
  tessera::ReadSliceAsync(ContextOf(table, consistency), pk, request,
                          Timed<Result<SliceResult>>(db_->MetricsOf(table->id), std::move(done)));
}

Result<RangeResult> Coordinator::ScanRange(const std::shared_ptr<const TableSchema>& table,
                                           const RangeRequest& request, const RequestConsistency& consistency) {
  if (!replicated()) return db_->ScanRange(table, request, consistency);
  // The windows' read beats the iterator's: it takes each partition's header
  // from the window instead of a round trip of its own (bench/RESULTS.md,
  // "Scans"); this caller holds its thread until it answers.
  return WaitFor<Result<RangeResult>>(
      [&](RangeDone done) { ScanRangeAsync(table, request, consistency, std::move(done)); });
}

void Coordinator::ScanRangeAsync(const std::shared_ptr<const TableSchema>& table, const RangeRequest& request,
                                 const RequestConsistency& consistency, RangeDone done) {
  if (!replicated()) return db_->ScanRangeAsync(table, request, consistency, std::move(done));
  if (!db_->TabletsOf(table->id)) return done(Dropped(*table));
  if (Status held = db_->HitReadFailpoint(*table); !held.ok()) return done(held);
  tessera::ScanRangeAsync(ContextOf(table, consistency), request,
                          Timed<Result<RangeResult>>(db_->MetricsOf(table->id), std::move(done)));
}

Result<std::optional<PaxosRound>> Coordinator::BeginPaxos(const std::shared_ptr<const TableSchema>& table,
                                                          const std::vector<std::string>& partition_key,
                                                          ConsistencyLevel serial, bool for_read) {
  return WaitFor<Result<std::optional<PaxosRound>>>([&](Replica::PaxosBegun done) {
    BeginPaxosAsync(table, partition_key, serial, for_read, std::move(done));
  });
}

void Coordinator::BeginPaxosAsync(const std::shared_ptr<const TableSchema>& table,
                                  const std::vector<std::string>& partition_key, ConsistencyLevel serial,
                                  bool for_read, Replica::PaxosBegun done) {
  if (!replicated()) return done(std::optional<PaxosRound>());
  auto layout = db_->CurrentLayout(table);
  std::vector<std::string_view> parts(partition_key.begin(), partition_key.end());
  std::string position;
  Token token = 0;
  Status encoded = EncodePartitionPosition(*layout, parts, &position, &token);
  if (!encoded.ok()) return done(encoded);
  auto map = db_->TabletsOf(layout->id);
  if (!map) return done(Dropped(*table));
  ReplicaOf(layout, map->Find(position))->BeginPaxosAsync(position, serial, for_read, std::move(done));
}

Result<std::optional<std::vector<std::string>>> Coordinator::SearchVectorsOfTablet(
    const std::shared_ptr<const TableSchema>& table, const std::string& tablet_start, const std::string& index,
    const std::vector<float>& query, size_t k) {
  auto map = db_->TabletsOf(table->id);
  if (!map) return Dropped(*table);
  for (const auto& t : map->tablets()) {
    if (t.start == tablet_start) return ReplicaOf(table, t)->SearchVectors(index, query, k);
  }
  return Status::NotFound("the tablet split or merged meanwhile");
}

Result<std::pair<TabletId, TabletId>> Coordinator::SplitTablet(const TableSchema& table, TabletId id,
                                                               std::optional<std::string> split_position,
                                                               const std::string& reason,
                                                               const TabletChangeSource& source) {
  if (!split_position && replicated()) {
    auto map = db_->TabletsOf(table.id);
    const Tablet* tablet = map ? map->FindById(id) : nullptr;
    if (tablet && !db_->StoredHere(table, *tablet) && !Database::MiddleToken(table, *tablet)) {
      auto current = db_->catalog().GetTableById(table.id);
      if (!current) return Dropped(table);
      auto it = ReplicaOf(current, *tablet)->NewIterator(tablet->start, tablet->end, kHousekeepingConsistency);
      TESSERA_ASSIGN_OR_RETURN(split_position, Database::MedianPartition(table, *tablet, it.get()));
    }
  }
  return db_->SplitTablet(table, id, std::move(split_position), reason, source);
}

}  // namespace tessera
