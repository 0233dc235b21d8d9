#include "keyviz/diagnosis.h"

#include "db/table_ddl.h"

namespace tessera::keyviz {
namespace {

std::string Qualified(const TableSchema& t) { return QuoteIdentifier(t.keyspace) + "." + QuoteIdentifier(t.name); }

}  // namespace

std::string RedesignedTableCql(const TableSchema& table, const std::string& name, bool add_bucket, bool bucket_first,
                               Distribution distribution) {
  std::vector<std::string> partition;
  for (const auto* c : table.PartitionKey()) partition.push_back(c->name);
  if (add_bucket) partition.insert(bucket_first ? partition.begin() : partition.end(), "bucket");
  std::vector<std::pair<std::string, std::string>> added;
  if (add_bucket) added.emplace_back("bucket", "smallint");
  return ::tessera::RedesignedTableCql(table, name, added, partition, distribution);
}

Diagnosis Diagnose(const Pattern& p, const TableSchema& table, const DiagnosisInput& in) {
  Diagnosis d;
  const std::string n = std::to_string(in.buckets);
  const auto pk = table.PartitionKey();
  const std::string column = !in.advancing_column.empty() ? in.advancing_column : (pk.empty() ? "?" : pk[0]->name);
  if (p.kind == "monotonic_tail") {
    d.title = "Diagonal: a monotonic tail on " + column;
    d.advice = !in.advice.empty()
                   ? in.advice
                   : "Inserts arrive in " + column + " order, so they all land on the last tablet. Lead the "
                     "partition key with a bucket (hash of another column mod " + n + "), so inserts spread over " +
                     n + " key ranges; a time-range read asks the " + n + " buckets and merges. Alternatives: swap "
                     "the key order, bit-reverse a sequence, use a UUID, or distribution = 'hash'.";
    d.ddl = RedesignedTableCql(table, table.name + "_bucketed", true, true, Distribution::kRange);
  } else if (p.kind == "hot_band" && !in.hot_partition.empty()) {
    d.title = "Horizontal band: hot partition " + in.hot_partition;
    d.advice = !in.advice.empty()
                   ? in.advice
                   : "One partition takes most of the " + std::string(MetricName(p.metric)) + ", and a partition "
                     "is never split. Add a bucket to the partition key (bucket = hash of a clustering or request "
                     "value mod " + n + "), so the partition spreads over " + n + " partitions.";
    d.ddl = RedesignedTableCql(table, table.name + "_bucketed", true, false, table.distribution);
  } else if (p.kind == "hot_band") {
    d.title = "Horizontal band: a hot key range";
    if (table.distribution == Distribution::kRange) {
      d.advice = "One range of partitions takes most of the " + std::string(MetricName(p.metric)) +
                 ". The balancer splits a tablet hot by load at its load median; where the hot range is a run of "
                 "neighbouring keys that the application reads together, spread it with hash distribution.";
      d.ddl = RedesignedTableCql(table, table.name + "_hashed", false, false, Distribution::kHash);
    } else {
      d.advice = "One token range takes most of the " + std::string(MetricName(p.metric)) +
                 " over many partitions: the balancer splits such a tablet by load at its load median; no key "
                 "change is needed.";
    }
  } else if (p.kind == "moving_hotspot") {
    d.title = "A moving hot spot";
    d.advice = "One range at a time takes the load and the range moves through the key space, as a bulk load in "
               "key order does. Nothing stays hot long enough to need a new design; if it is a steady pattern, "
               "load in a shuffled order.";
  } else if (p.kind == "even") {
    d.title = "Even spread";
    d.advice = "The load is spread over the tablets of " + Qualified(table) + "; no change is needed.";
  } else if (p.kind == "single_tablet") {
    d.title = "One tablet";
    d.advice = "The table has one tablet: too little data or load to split yet.";
  } else {
    d.title = "No load";
    d.advice = "Too few operations to name a pattern.";
  }
  return d;
}

}  // namespace tessera::keyviz
