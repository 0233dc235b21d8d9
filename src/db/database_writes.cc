// Database's write path (db/database.h): mutations built into one WriteSet,
// routed to their tablets' replicas (one write per replica set), and the
// counts of what was written; ApplyBatchAsync answers without waiting for
// another node.
#include <algorithm>
#include <cstdint>
#include <map>

#include "common/bytes.h"
#include "common/steady_micros.h"
#include "db/database.h"
#include "db/mutation_builder.h"
#include "keys/storage_key.h"
#include "types/value_literal.h"

namespace tessera {

Status Database::Apply(const Mutation& m, const RequestConsistency& consistency) {
  return ApplyBatch({m}, nullptr, consistency);
}

Status Database::ApplyBatch(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                            const RequestConsistency& consistency) {
  if (mutations.empty()) return Status::OK();
  // A bucketed or partition-bucketed table's rows go where its current layout puts them (see
  // ChangeBucketCount and RaisePartitionBuckets).
  std::shared_lock<std::shared_mutex> layout(bucket_layout_mu_, std::defer_lock);
  std::vector<Mutation> current;
  if (std::any_of(mutations.begin(), mutations.end(), [](const Mutation& m) { return m.table->HasOnlineLayout(); })) {
    layout.lock();
    current = mutations;
    for (auto& m : current) m.table = CurrentLayout(m.table);
    return ApplyRouted(current, warnings, consistency);
  }
  return ApplyRouted(mutations, warnings, consistency);
}

struct Database::RoutedWrite {
  int64_t started = 0, now = 0;
  WriteSet ws;
  struct Part {
    std::shared_ptr<const TabletMap> map;
    const Tablet* tablet;
    BuiltMutation::Part part;
  };
  std::vector<Part> parts;
  std::vector<BuiltMutation> built;
  std::vector<uint32_t> tables;  // per mutation
};

bool Database::AppliesWithoutWaiting(const std::vector<Mutation>& mutations,
                                     const RequestConsistency& consistency) const {
  return cluster_tablets_.load(std::memory_order_relaxed) && !mutations.empty() && !consistency.paxos &&
         std::none_of(mutations.begin(), mutations.end(),
                      [](const Mutation& m) { return m.table->HasOnlineLayout() || m.table->HasCounters(); });
}

void Database::ApplyBatchAsync(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                               WriteDone done) {
  if (!AppliesWithoutWaiting(mutations, consistency)) {
    std::vector<std::string> warnings;
    Status s = ApplyBatch(mutations, &warnings, consistency);
    return done(std::move(s), std::move(warnings));
  }
  auto write = std::make_shared<RoutedWrite>();
  std::vector<std::string> warnings;
  Status routed = RouteWrite(mutations, &warnings, write.get());
  if (!routed.ok() || write->parts.empty()) return done(std::move(routed), std::move(warnings));
  const WriteSet& ws = write->ws;
  ApplyToReplicasAsync(ws, consistency,
                       [this, write, warnings = std::move(warnings), done = std::move(done)](Status s) mutable {
                         if (s.ok()) CountRoutedWrite(*write);
                         done(std::move(s), std::move(warnings));
                       });
}

Result<std::shared_ptr<Replica>> Database::GroupByReplica(const WriteSet& ws, const RequestConsistency& consistency,
                                          std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>>* groups) {
  // The replica of each tablet reached is chosen once (ReplicaOf); tablets
  // the local replica serves share one group.
  std::map<uint32_t, std::pair<std::shared_ptr<const TabletMap>, std::shared_ptr<const TableSchema>>> tables;
  struct Reached {
    uint32_t table_id;
    TabletId tablet_id;
    size_t replica;  // into `replicas`
  };
  std::vector<Reached> reached;
  std::vector<std::shared_ptr<Replica>> replicas;  // distinct
  auto replica_of = [&](std::string_view key) -> Result<size_t> {
    if (key.size() < 4) return Status::InvalidArgument("a write outside every table");
    const uint32_t table_id = GetBigEndian32(key.data());
    auto& [map, table] = tables[table_id];
    if (!map) {
      map = TabletsOf(table_id);
      table = catalog_.GetTableById(table_id);
    }
    if (!map || !table) return Status::NotFound("the table was dropped");
    const Tablet& tablet = map->Find(key);
    for (const Reached& r : reached) {
      if (r.table_id == table_id && r.tablet_id == tablet.id) return r.replica;
    }
    std::shared_ptr<Replica> replica = ReplicaOf(table, tablet);
    size_t index = replicas.size();
    if (replica == local_replica_) {
      index = static_cast<size_t>(std::find(replicas.begin(), replicas.end(), replica) - replicas.begin());
    }
    if (index == replicas.size()) replicas.push_back(std::move(replica));
    reached.push_back({table_id, tablet.id, index});
    return index;
  };
  std::vector<size_t> replica_of_op;
  replica_of_op.reserve(ws.ops().size());
  for (const WriteSet::Op& op : ws.ops()) {
    TESSERA_ASSIGN_OR_RETURN(size_t index, replica_of(op.key));
    replica_of_op.push_back(index);
  }
  if (replicas.empty()) return std::shared_ptr<Replica>();
  if (replicas.size() == 1) return replicas.front();
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> group_of_replica;
  // A conditional write's own partition goes first.
  if (consistency.paxos) {
    Result<size_t> index = replica_of(consistency.paxos->partition);
    if (index.ok()) {
      group_of_replica.assign(replicas.size(), kNone);
      group_of_replica[*index] = 0;
      groups->push_back({replicas[*index], WriteSet()});
    }
  }
  group_of_replica.resize(replicas.size(), kNone);
  for (size_t i = 0; i < replica_of_op.size(); ++i) {
    size_t& group = group_of_replica[replica_of_op[i]];
    if (group == kNone) {
      group = groups->size();
      groups->push_back({replicas[replica_of_op[i]], WriteSet()});
    }
    const WriteSet::Op& op = ws.ops()[i];
    if (op.kind == WriteSet::Op::kMerge) {
      (*groups)[group].second.Merge(op.key, op.value);
    } else {
      (*groups)[group].second.DeleteRange(op.key, op.value);
    }
  }
  return std::shared_ptr<Replica>();
}

Status Database::ApplyToReplicas(const WriteSet& ws, const RequestConsistency& consistency) {
  // One node: every tablet's replica is the local one.
  if (!cluster_tablets_.load(std::memory_order_relaxed)) return local_replica_->Apply(ws, consistency);
  // Several replica sets (only in a cluster): one write each, as Cassandra's
  // unlogged batch across replica sets; the first error is returned. When a
  // conditional write's round fails, nothing else (index entries) is written.
  std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>> groups;
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Replica> all, GroupByReplica(ws, consistency, &groups));
  if (all) return all->Apply(ws, consistency);
  Status first;
  for (const auto& [replica, part] : groups) {
    if (part.empty()) continue;
    Status s = replica->Apply(part, consistency);
    if (!s.ok() && consistency.paxos) return s;
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

void Database::ApplyToReplicasAsync(const WriteSet& ws, const RequestConsistency& consistency,
                                    std::function<void(Status)> done) {
  if (!cluster_tablets_.load(std::memory_order_relaxed) || consistency.paxos) {
    return done(ApplyToReplicas(ws, consistency));
  }
  std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>> groups;
  Result<std::shared_ptr<Replica>> all = GroupByReplica(ws, consistency, &groups);
  if (!all.ok()) return done(all.status());
  if (*all) return (*all)->ApplyAsync(ws, consistency, std::move(done));
  if (groups.empty()) return done(Status::OK());
  // Several replica sets: all sent at once, the first error answered once all did.
  struct Join {
    std::mutex mu;
    size_t remaining = 0;
    Status first;
    std::function<void(Status)> done;
  };
  auto join = std::make_shared<Join>();
  join->remaining = groups.size();
  join->done = std::move(done);
  for (auto& [replica, part] : groups) {
    replica->ApplyAsync(part, consistency, [join](Status s) {
      std::unique_lock<std::mutex> lock(join->mu);
      if (!s.ok() && join->first.ok()) join->first = std::move(s);
      if (--join->remaining > 0) return;
      lock.unlock();
      join->done(std::move(join->first));
    });
  }
}

Status Database::RouteWrite(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                            RoutedWrite* out) {
  out->started = SteadyMicros();
  out->now = NextTimestamp();
  for (const auto& m : mutations) {
    TESSERA_ASSIGN_OR_RETURN(BuiltMutation built, BuildWriteSet(m, out->now, &out->ws));
    auto map = TabletsOf(m.table->id);
    if (!map) return Status::NotFound("table " + m.table->keyspace + "." + m.table->name + " was dropped");
    for (auto& part : built.parts) {
      const Tablet* tablet = &map->Find(part.position);
      out->parts.push_back({map, tablet, std::move(part)});
    }
    TESSERA_RETURN_IF_ERROR(CheckPartitionGuardrail(*m.table, built.partition_position, warnings));
    out->built.push_back(std::move(built));
    out->tables.push_back(m.table->id);
  }
  return Status::OK();
}

void Database::CountRoutedWrite(const RoutedWrite& write) {
  for (const auto& r : write.parts) {
    r.tablet->counters->CountWrite(write.now, r.part.row_writes, r.part.bytes);
    r.tablet->counters->sample.Add(write.now, r.part.position, std::max<uint64_t>(1, r.part.row_writes),
                                   /*write=*/true);
  }
  for (size_t i = 0; i < write.built.size(); ++i) {
    uint64_t bytes = 0;
    for (const auto& part : write.built[i].parts) bytes += part.bytes;
    CountWrittenPartition(write.tables[i], write.built[i].partition_position, write.built[i].row_writes, bytes);
  }
  const int64_t elapsed = SteadyMicros() - write.started;
  uint32_t last_table = 0;
  for (uint32_t table : write.tables) {
    if (table == last_table) continue;
    last_table = table;
    MetricsOf(table)->write_latency.Record(elapsed);
  }
}

Status Database::ApplyRouted(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                             const RequestConsistency& consistency) {
  RoutedWrite write;
  TESSERA_RETURN_IF_ERROR(RouteWrite(mutations, warnings, &write));
  if (write.parts.empty()) return Status::OK();
  TESSERA_RETURN_IF_ERROR(ApplyToReplicas(write.ws, consistency));
  CountRoutedWrite(write);
  return Status::OK();
}

Status Database::CheckPartitionGuardrail(const TableSchema& table, const std::string& position,
                                         std::vector<std::string>* warnings) {
  auto large = large_partitions_.Find(table.id, position);
  if (!large) return Status::OK();
  const Guardrails& g = guardrails_;
  std::string pk = "?";
  if (auto decoded = DecodePartitionPosition(table, position); decoded.ok()) pk = PartitionKeyLiteral(table, *decoded);
  const std::string what = "Partition " + table.keyspace + "." + table.name + " " + pk + " has " +
                           std::to_string(large->rows) + " rows and " + std::to_string(large->bytes) + " bytes";
  if ((g.partition_rows_fail > 0 && large->rows >= g.partition_rows_fail) ||
      (g.partition_bytes_fail > 0 && large->bytes >= g.partition_bytes_fail)) {
    return Status::InvalidArgument(what + ", at the partition fail threshold (" +
                                   std::to_string(g.partition_rows_fail) + " rows / " +
                                   std::to_string(g.partition_bytes_fail) + " bytes); write refused");
  }
  if (warnings && g.PartitionAboveWarn(large->rows, large->bytes)) {
    warnings->push_back(what + ", above the partition warn threshold (" + std::to_string(g.partition_rows_warn) +
                        " rows / " + std::to_string(g.partition_bytes_warn) +
                        " bytes); consider a time bucket in the partition key");
  }
  return Status::OK();
}

}  // namespace tessera
