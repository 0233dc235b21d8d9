// The tablet layer's virtual tables: system.tablets, tablet_events,
// hot_partitions, large_partitions and key_advice (schemas in
// system_tables.cc).
#include "cql/executor/system_tables.h"

#include "common/bytes.h"
#include "cql/executor/virtual_row_builder.h"
#include "db/key_advice.h"
#include "keys/storage_key.h"
#include "types/value_literal.h"

namespace tessera::cql {

Result<std::vector<SourceRow>> SystemTables::TabletRows(const TableSchema& t) const {
  std::vector<SourceRow> rows;
  if (t.name == "tablet_events") {
    std::map<uint32_t, int> seq;
    for (const auto& e : db_->TabletEvents()) {
      auto table = db_->catalog().GetTableById(e.table_id);
      if (!table) continue;
      std::vector<Value> from, to;
      for (auto id : e.from) from.push_back(Value::Int(static_cast<int64_t>(id)));
      for (auto id : e.to) to.push_back(Value::Int(static_cast<int64_t>(id)));
      RowBuilder b(t);
      b.Text("keyspace_name", table->keyspace).Text("table_name", table->name).Int("seq", seq[e.table_id]++)
          .Int("at", e.at_micros / 1000).Text("kind", e.kind).Set("from_tablets", Value::List(from))
          .Set("to_tablets", Value::List(to)).Text("reason", e.reason);
      rows.push_back(b.Take());
    }
    return rows;
  }
  if (t.name == "large_partitions") return LargePartitionRows(t);
  if (t.name == "key_advice") return KeyAdviceRows(t);
  for (const auto& ks : db_->catalog().Keyspaces()) {
    for (const auto& table : db_->catalog().Tables(ks.name)) {
      if (t.name == "tablets") {
        for (const auto& s : db_->Tablets(*table)) {
          RowBuilder b(t);
          b.Text("keyspace_name", ks.name).Text("table_name", table->name).Int("tablet_id", static_cast<int64_t>(s.id))
              .Text("start_key", ToHex(s.start)).Text("end_key", ToHex(s.end))
              .Int("size_bytes", static_cast<int64_t>(s.size_bytes)).Int("rows_estimate", static_cast<int64_t>(s.rows_estimate))
              .Int("reads", static_cast<int64_t>(s.reads)).Int("writes", static_cast<int64_t>(s.writes))
              .Int("bytes_read", static_cast<int64_t>(s.bytes_read)).Int("bytes_written", static_cast<int64_t>(s.bytes_written))
              .Set("reads_per_second", Value::Double(s.reads_per_second))
              .Set("writes_per_second", Value::Double(s.writes_per_second)).Text("state", s.state)
              .Set("replica_reads_per_second", Value::Double(s.replica_reads_per_second))
              .Set("replica_writes_per_second", Value::Double(s.replica_writes_per_second));
          if (!s.replicas.empty()) {
            std::vector<Value> hosts;
            for (const auto& h : s.replicas) hosts.push_back(Value::Bytes(h));
            b.Set("replicas", Value::List(std::move(hosts)));
          }
          rows.push_back(b.Take());
        }
        continue;
      }
      for (bool writes : {false, true}) {
        uint64_t total = 0;
        int rank = 1;
        for (const auto& h : db_->HotPartitions(*table, writes, 10, &total)) {
          RowBuilder b(t);
          b.Text("keyspace_name", ks.name).Text("table_name", table->name).Text("kind", writes ? "writes" : "reads")
              .Int("rank", rank++).Text("partition_key", PartitionKeyLiteral(*table, h.partition_key))
              .Int("count", static_cast<int64_t>(h.count)).Int("error", static_cast<int64_t>(h.error))
              .Set("share", Value::Double(total ? static_cast<double>(h.count) / static_cast<double>(total) : 0.0));
          rows.push_back(b.Take());
        }
      }
    }
  }
  return rows;
}


Result<std::vector<SourceRow>> SystemTables::LargePartitionRows(const TableSchema& t) const {
  std::vector<SourceRow> rows;
  const Guardrails& g = db_->guardrails();
  for (const auto& m : db_->large_partitions().All()) {
    auto table = db_->catalog().GetTableById(m.table_id);
    if (!table) continue;
    auto pk = DecodePartitionPosition(*table, m.position);
    const bool over = g.PartitionAboveWarn(m.rows, m.bytes);
    RowBuilder b(t);
    b.Text("keyspace_name", table->keyspace).Text("table_name", table->name)
        .Text("partition_key", pk.ok() ? PartitionKeyLiteral(*table, *pk) : ToHex(m.position))
        .Int("rows", static_cast<int64_t>(m.rows)).Int("size_bytes", static_cast<int64_t>(m.bytes))
        .Int("measured_at", m.measured_micros / 1000).Text("state", over ? "over_warn_threshold" : "approaching");
    rows.push_back(b.Take());
  }
  return rows;
}

Result<std::vector<SourceRow>> SystemTables::KeyAdviceRows(const TableSchema& t) const {
  std::vector<SourceRow> rows;
  for (const auto& a : ComputeKeyAdvice(*db_)) {
    RowBuilder b(t);
    b.Text("keyspace_name", a.keyspace).Text("table_name", a.table).Text("kind", a.kind).Text("subject", a.subject)
        .Set("score", Value::Double(a.score)).Text("evidence", a.evidence).Text("advice", a.advice);
    rows.push_back(b.Take());
  }
  return rows;
}

}  // namespace tessera::cql
