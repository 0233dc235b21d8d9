// Database's write path (db/database.h): mutations built into one WriteSet,
// routed to their tablets, written to this node's replica, and the counts of
// what was written. A cluster's coordinator routes the same way
// (RouteWrite) and sends the WriteSet to the tablets' replicas itself.
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
  // A bucketed or partition-bucketed table's layout holds still from routing
  // to the storage write (ChangeBucketCount and RaisePartitionBuckets take
  // the lock exclusively).
  std::shared_lock<std::shared_mutex> layout(bucket_layout_mu_, std::defer_lock);
  if (std::any_of(mutations.begin(), mutations.end(), [](const Mutation& m) { return m.table->HasOnlineLayout(); })) {
    layout.lock();
  }
  RoutedWrite write;
  TESSERA_RETURN_IF_ERROR(RouteWrite(mutations, warnings, &write));
  if (write.parts.empty()) return Status::OK();
  TESSERA_RETURN_IF_ERROR(local_replica_->Apply(write.ws, consistency));
  CountRoutedWrite(write);
  return Status::OK();
}

Status Database::RouteWrite(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                            RoutedWrite* out) {
  // A bucketed or partition-bucketed table's rows go where its current layout puts them.
  std::vector<Mutation> current;
  if (std::any_of(mutations.begin(), mutations.end(), [](const Mutation& m) { return m.table->HasOnlineLayout(); })) {
    current = mutations;
    for (auto& m : current) m.table = CurrentLayout(m.table);
  }
  out->started = SteadyMicros();
  out->now = NextTimestamp();
  for (const auto& m : current.empty() ? mutations : current) {
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
