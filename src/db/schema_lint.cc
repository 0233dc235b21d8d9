#include "db/schema_lint.h"

#include <algorithm>
#include <cstdint>

#include "common/bytes.h"
#include "db/table_ddl.h"

namespace tessera {
namespace {

constexpr int64_t kValuesPerPartition = 100000;  // Cassandra's rule of thumb for N_v

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool EndsWith(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

bool IsTimeType(const CqlType& t) {
  return t.kind() == TypeKind::kTimestamp || t.kind() == TypeKind::kTimeuuid || t.kind() == TypeKind::kDate;
}

bool IsIntegerType(const CqlType& t) {
  return t.kind() == TypeKind::kInt || t.kind() == TypeKind::kBigint || t.kind() == TypeKind::kSmallint ||
         t.kind() == TypeKind::kVarint;
}

bool NamesASequence(const std::string& raw) {
  const std::string n = AsciiLower(raw);
  if (Contains(n, "shard") || Contains(n, "bucket") || Contains(n, "hash") || Contains(n, "prefix")) return false;
  return n == "id" || EndsWith(n, "_id") || EndsWith(n, "id") || Contains(n, "seq") || Contains(n, "serial") ||
         Contains(n, "counter") || EndsWith(n, "_no") || Contains(n, "num") || Contains(n, "increment");
}

bool NamesFewValues(const std::string& raw) {
  const std::string n = AsciiLower(raw);
  for (const char* w : {"status", "state", "type", "kind", "category", "gender", "flag", "level"}) {
    if (n == w || EndsWith(n, std::string("_") + w)) return true;
  }
  return EndsWith(n, "_code") || n == "code";
}

bool IsTimeLike(const ColumnDef& c) {
  if (IsTimeType(c.type)) return true;
  const std::string n = AsciiLower(c.name);
  for (const char* w : {"bucket", "day", "date", "week", "month", "hour", "year", "period", "window"}) {
    if (Contains(n, w)) return true;
  }
  return false;
}

std::vector<std::string> PartitionNames(const TableSchema& t) {
  std::vector<std::string> out;
  for (const auto* c : t.PartitionKey()) out.push_back(c->name);
  return out;
}

KeyAdvice Row(const TableSchema& t, const std::string& rule, const std::string& column) {
  KeyAdvice a;
  a.keyspace = t.keyspace;
  a.table = t.name;
  a.kind = "schema";
  a.subject = rule + ": " + column;
  a.score = 1;
  return a;
}

void MonotonicLeadingKey(const TableSchema& t, std::vector<KeyAdvice>* out) {
  if (t.distribution != Distribution::kRange || t.buckets.enabled()) return;  // buckets are the fix
  const ColumnDef& first = *t.PartitionKey().front();
  const bool time = IsTimeType(first.type);
  if (!time && !(IsIntegerType(first.type) && NamesASequence(first.name))) return;
  KeyAdvice a = Row(t, "monotonic_leading_key", first.name);
  a.evidence = "the partition key of this range table starts with " + first.name + " (" + first.type.ToCql() + "), " +
               (time ? "a time that only grows" : "an integer named like a sequence") +
               ": every insert lands on the last tablet, which no split relieves";
  std::vector<std::string> pk = PartitionNames(t);
  pk.insert(pk.begin(), "bucket");
  a.advice = "Lead the partition key with a bucket (hash of another column mod 16) so that inserts spread over 16 "
             "key ranges, and read a time range from every bucket; or swap the key order, bit-reverse a sequence, "
             "use a uuid, or distribution = 'hash'. DDL: " +
             RedesignedTableCql(t, t.name, {{"bucket", "smallint"}}, pk, Distribution::kRange);
  out->push_back(std::move(a));
}

void LowCardinalityPartitionKey(const TableSchema& t, std::vector<KeyAdvice>* out) {
  const auto pk = t.PartitionKey();
  if (pk.size() != 1) return;
  const ColumnDef& c = *pk.front();
  std::string why;
  if (c.type.kind() == TypeKind::kBoolean) why = "a boolean: at most 2 partitions";
  else if (c.type.kind() == TypeKind::kTinyint) why = "a tinyint: at most 256 partitions";
  else if (c.type.kind() == TypeKind::kDate) why = "a date alone: one partition per day takes all of that day's writes";
  else if (NamesFewValues(c.name)) why = "named like a status or category: a handful of values, so a handful of partitions";
  else return;
  KeyAdvice a = Row(t, "low_cardinality_partition_key", c.name);
  a.evidence = "the partition key is " + c.name + " (" + c.type.ToCql() + "), " + why +
               "; each grows without bound and a partition is never split";
  std::vector<std::string> pk_names = PartitionNames(t);
  pk_names.push_back("bucket");
  a.advice = "Add a high-cardinality column (a user or device id) or a bucket to the partition key, so each " + c.name +
             " value spreads over many partitions; read a value's rows from its buckets. DDL: " +
             RedesignedTableCql(t, t.name, {{"bucket", "smallint"}}, pk_names, t.distribution);
  out->push_back(std::move(a));
}

void UnboundedTimeSeries(const TableSchema& t, const Guardrails& g, std::vector<KeyAdvice>* out) {
  const auto clustering = t.Clustering();
  if (clustering.empty() || !IsTimeType(clustering.front()->type)) return;
  for (const auto* c : t.PartitionKey()) {
    if (IsTimeLike(*c)) return;
  }
  const int64_t n_c = static_cast<int64_t>(t.columns.size());
  const int64_t n_pk = static_cast<int64_t>(t.PartitionKey().size() + clustering.size());
  const int64_t n_s = static_cast<int64_t>(t.OfKind(ColumnKind::kStatic).size());
  const int64_t per_row = std::max<int64_t>(1, n_c - n_pk - n_s);
  // N_v = N_r (N_c - N_pk - N_s) + N_s <= 100,000, and N_r <= partition_rows_warn.
  const int64_t rows_by_values = (kValuesPerPartition - n_s) / per_row;
  const int64_t max_rows = std::min<int64_t>(rows_by_values, static_cast<int64_t>(g.partition_rows_warn));
  struct Span { const char* name; int64_t seconds; };
  const Span spans[] = {{"month", 30 * 86400}, {"week", 7 * 86400}, {"day", 86400}, {"hour", 3600}};
  const Span* chosen = &spans[3];
  for (const auto& s : spans) {
    if (s.seconds <= max_rows) {
      chosen = &s;
      break;
    }
  }
  const ColumnDef& time = *clustering.front();
  KeyAdvice a = Row(t, "unbounded_time_series", time.name);
  a.evidence = "rows are clustered by " + time.name + " (" + time.type.ToCql() + ") under a partition key with no time "
               "bucket, so a partition grows for as long as its series lives. N_v = N_r (N_c - N_pk - N_s) + N_s = N_r (" +
               std::to_string(n_c) + " - " + std::to_string(n_pk) + " - " + std::to_string(n_s) + ") + " +
               std::to_string(n_s) + ": a partition reaches " + std::to_string(max_rows) + " rows (" +
               (rows_by_values <= static_cast<int64_t>(g.partition_rows_warn) ? "100,000 values" :
                                                                              "the partition_rows_warn guardrail") +
               ") after " + std::to_string(max_rows / 3600) + " hours at one row a second";
  const std::string bucket = std::string(chosen->name);
  std::vector<std::string> pk = PartitionNames(t);
  pk.push_back(bucket);
  a.advice = "Bound each partition with a time bucket in the partition key (one " + bucket + " holds at most " +
             std::to_string(chosen->seconds) + " rows at one a second); a time-range read asks the buckets it spans. DDL: " +
             RedesignedTableCql(t, t.name, {{bucket, bucket == "hour" ? "timestamp" : "date"}}, pk, t.distribution);
  out->push_back(std::move(a));
}

}  // namespace

std::vector<KeyAdvice> LintTableDesign(const TableSchema& table, const Guardrails& guardrails) {
  std::vector<KeyAdvice> out;
  if (table.PartitionKey().empty()) return out;
  MonotonicLeadingKey(table, &out);
  LowCardinalityPartitionKey(table, &out);
  UnboundedTimeSeries(table, guardrails, &out);
  return out;
}

std::string LintWarning(const KeyAdvice& a) {
  return "Design lint (" + a.subject + "): " + a.evidence + ". " + a.advice;
}

}  // namespace tessera
