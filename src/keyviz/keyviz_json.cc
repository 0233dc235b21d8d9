#include "keyviz/keyviz_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

#include "common/bytes.h"
#include "db/database.h"
#include "db/key_advice.h"
#include "keyviz/diagnosis.h"
#include "keyviz/patterns.h"
#include "types/value_literal.h"

namespace tessera::keyviz {
namespace {

using nlohmann::json;

// What live detection knows of a table, for one metric.
struct Detected {
  double hot_share = 0;
  std::string hot_partition;
  const KeyAdvice* hot_advice = nullptr;
};

Detected Detect(Database& db, const TableSchema& t, Metric metric, const std::vector<KeyAdvice>& advice) {
  Detected d;
  uint64_t total = 0;
  const bool writes = metric == Metric::kWrites;
  auto top = db.HotPartitions(t, writes, 1, &total);
  if (!top.empty() && total >= kMinOperations) {
    d.hot_share = static_cast<double>(top[0].count - top[0].error) / static_cast<double>(total);
    d.hot_partition = PartitionKeyLiteral(t, top[0].partition_key);
  }
  for (const auto& a : advice) {
    if (a.keyspace == t.keyspace && a.table == t.name && a.kind == "hot_partition" && a.subject == d.hot_partition) {
      d.hot_advice = &a;
    }
  }
  return d;
}

json PatternJson(Database& db, const KeyVizHistory& history, const TableSchema& t, Metric metric,
                 const std::vector<KeyAdvice>& advice) {
  const Detected detected = Detect(db, t, metric, advice);
  PatternHints hints;
  hints.range_table = t.distribution == Distribution::kRange;
  hints.hot_partition_share = detected.hot_share;
  const Pattern p = ClassifyTable(history, t.id, metric, hints);
  DiagnosisInput in;
  if (p.kind == "monotonic_tail") {
    for (const auto& a : advice) {
      if (a.keyspace == t.keyspace && a.table == t.name && a.kind == "monotonic_leading_key") {
        in.advancing_column = a.subject;
        in.advice = a.advice;
      }
    }
  } else if (p.kind == "hot_band" && detected.hot_share >= 0.5) {
    in.hot_partition = detected.hot_partition;
    if (detected.hot_advice) in.advice = detected.hot_advice->advice;
    in.buckets = BucketsForShare(detected.hot_share);
  }
  const Diagnosis d = Diagnose(p, t, in);
  return {{"metric", MetricName(metric)}, {"kind", p.kind},         {"shape", p.shape},
          {"share", p.share},             {"operations", p.operations}, {"columns", p.columns},
          {"max_rows", p.max_rows},       {"evidence", p.evidence},  {"title", d.title},
          {"advice", d.advice},           {"ddl", d.ddl}};
}

// Which pattern a table's heading names: a problem (tail, band) before a
// moving spot, before a spread, then by operations.
std::pair<int, double> Headline(const json& pattern) {
  const std::string kind = pattern["kind"];
  const int rank = kind == "monotonic_tail" || kind == "hot_band" ? 3 : kind == "moving_hotspot" ? 2 : kind == "even" ? 1 : 0;
  return {rank, pattern["operations"].get<double>()};
}

// `next`: the next row of the same table in the column, whose start is this row's end; null for the last.
json RowJson(const KeyVizRow& r, const KeyVizRow* next, const std::string& node) {
  return {{"key", ToHex(r.Key())},
          {"end", next ? ToHex(next->Key()) : ""},
          {"end_label", next ? std::string(next->Label()) : "(table end)"},
          {"key_truncated", r.key_truncated},
          {"label", std::string(r.Label())},
          {"tablet", r.tablet},    {"tablets", r.tablets},             {"node", node},
          {"writes", r.writes},    {"reads", r.reads},                 {"bytes", r.bytes},
          {"latency_us", r.latency_micros}};
}

}  // namespace

std::string RenderKeyVizJson(Database& db, const KeyVizHistory& history, const JsonOptions& o) {
  const size_t first = o.last_columns && o.last_columns < history.size() ? history.size() - o.last_columns : 0;
  json out = {{"node", o.node},
              {"now_micros", db.NowMicros()},
              {"column_seconds", static_cast<double>(history.options().column_micros) / 1e6},
              {"max_columns", history.options().max_columns},
              {"max_rows", history.options().max_rows},
              {"memory_bytes", history.MemoryBytes()},
              {"memory_bound_bytes", history.MemoryBoundNow()},
              {"metrics", {"writes", "reads", "bytes", "latency_us"}},
              {"tables", json::array()}};
  const auto advice = ComputeKeyAdvice(db);
  const auto events = db.TabletEvents();
  const int64_t since = history.size() > first ? history.column(first).start_micros : db.NowMicros();
  for (const auto& t : db.catalog().AllTables()) {
    const std::string name = t->keyspace + "." + t->name;
    if (!o.table.empty() && o.table != name) continue;
    json columns = json::array();
    for (size_t c = first; c < history.size(); ++c) {
      const KeyVizColumn& col = history.column(c);
      json rows = json::array();
      for (size_t i = 0; i < col.rows.size(); ++i) {
        const KeyVizRow& r = col.rows[i];
        if (r.table_id != t->id || (r.reads == 0 && r.writes == 0 && r.bytes == 0)) continue;  // idle: not sent
        const bool last = i + 1 == col.rows.size() || col.rows[i + 1].table_id != r.table_id;
        rows.push_back(RowJson(r, last ? nullptr : &col.rows[i + 1], o.node));
      }
      if (rows.empty()) continue;
      columns.push_back({{"start_micros", col.start_micros}, {"end_micros", col.end_micros},
                         {"tables_left_out", col.tables_left_out}, {"rows", std::move(rows)}});
    }
    json table_events = json::array();
    for (const auto& e : events) {
      if (e.table_id != t->id || e.at_micros < since) continue;
      table_events.push_back(
          {{"at_micros", e.at_micros}, {"kind", e.kind}, {"from", e.from}, {"to", e.to}, {"reason", e.reason}});
    }
    json patterns = {PatternJson(db, history, *t, Metric::kWrites, advice),
                     PatternJson(db, history, *t, Metric::kReads, advice)};
    const size_t busier = Headline(patterns[1]) > Headline(patterns[0]) ? 1 : 0;
    out["tables"].push_back({{"id", t->id},
                             {"name", name},
                             {"distribution", ToString(t->distribution)},
                             {"columns", std::move(columns)},
                             {"pattern", patterns[busier]},
                             {"patterns", std::move(patterns)},
                             {"events", std::move(table_events)}});
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);  // a blob key's label is hex, but never throw
}

}  // namespace tessera::keyviz
