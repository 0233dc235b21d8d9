#include "db/key_advice.h"

#include "db/schema_lint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "db/database.h"
#include "keys/storage_key.h"
#include "tablets/key_sample.h"
#include "types/value_literal.h"

namespace tessera {
namespace {

std::string Percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100);
  return buf;
}

std::string Fixed(double v, int digits = 0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The partition-key column along which the sampled writes advance: the first
// component that differs between the smallest and the greatest sampled key.
std::string AdvancingColumn(const TableSchema& t, const KeySample::Snapshot& sample) {
  auto cols = t.PartitionKey();
  if (sample.keys.size() < 2 || cols.empty()) return cols.empty() ? "?" : cols[0]->name;
  auto lo = DecodePartitionPosition(t, sample.keys.front().first);
  auto hi = DecodePartitionPosition(t, sample.keys.back().first);
  if (lo.ok() && hi.ok()) {
    for (size_t i = 0; i < cols.size() && i < lo->size() && i < hi->size(); ++i) {
      if ((*lo)[i] != (*hi)[i]) return cols[i]->name;
    }
  }
  return cols[0]->name;
}

std::string KeyColumns(const std::vector<const ColumnDef*>& cols) {
  std::string s;
  for (const auto* c : cols) s += (s.empty() ? "" : ", ") + c->name;
  return s;
}

// A buckets = 'auto' table whose bucket count the balancer raised: when, why, and what it means.
void BucketsRaised(Database& db, const TableSchema& t, std::vector<KeyAdvice>* out) {
  if (!t.buckets.automatic || t.buckets.versions.size() < 2) return;
  std::string when;
  for (const auto& e : db.TabletEvents()) {
    if (e.table_id == t.id && e.kind == "buckets") when = e.reason;
  }
  const std::string col = t.PartitionKey().front()->name;
  const uint32_t n = t.buckets.current_count();
  KeyAdvice a{t.keyspace, t.name, "buckets", col, 1.0, "", ""};
  a.evidence = "buckets = 'auto': inserts arrived in " + col + " order onto the last tablet (a tail hotspot), so the " +
               "balancer raised the bucket count to " + std::to_string(n) + (when.empty() ? "" : " (" + when + ")") + ".";
  a.advice = "Nothing to change: new partitions spread over " + std::to_string(n) + " buckets, each on its own "
             "tablets, and range reads merge every bucket in key order. Partitions written before the raise stay "
             "where they are; nothing was rewritten.";
  out->push_back(std::move(a));
}

void MonotonicKey(Database& db, const TableSchema& t, std::vector<KeyAdvice>* out) {
  if (t.distribution != Distribution::kRange) return;
  if (t.buckets.enabled()) return BucketsRaised(db, t, out);  // the database applies the fix itself
  const TableLoad load = db.TabletLoads(t);
  double total_writes = 0;
  for (const auto& tablet : load.tablets) total_writes += tablet.writes_per_second;
  for (size_t i = 0; i < load.tablets.size(); ++i) {
    const TabletLoad& tablet = load.tablets[i];
    // The balancer judges a tail from a few dozen writes (a hold is cheap to undo); advice waits for a
    // full lag window, so that a small tablet whose first writes happened to be its greatest keys is no tail.
    if (!IsAppendTail(tablet, db.balancer_options()) || tablet.sample.writes < KeySample::kTailLag) continue;
    const bool last = i + 1 == load.tablets.size();
    const double last_share = total_writes > 0 ? load.tablets.back().writes_per_second / total_writes : 0;
    const std::string col = AdvancingColumn(t, tablet.sample);
    KeyAdvice a{t.keyspace, t.name, "monotonic_leading_key", col, last_share, "", ""};
    a.evidence = Percent(TailShare(tablet.sample)) + " of " + std::to_string(tablet.sample.writes) +
                 " recent writes to tablet " + std::to_string(tablet.id) + (last ? " (the last tablet)" : "") +
                 " went past, or close behind, its greatest key: inserts arrive in " + col +
                 " order (a tail hotspot). " +
                 // Once the load has stopped the rates are 0: say so rather than "0% of 0 writes/s".
                 (total_writes > 0 ? "The last tablet takes " + Percent(last_share) + " of the table's " +
                                         Fixed(total_writes) + " writes/s, and a"
                                   : "The last tablet takes the inserts while they arrive (none arrive now), and a") +
                 " split would only move the hot spot to the new last tablet.";
    auto pk = t.PartitionKey();
    std::string swap;
    if (pk.size() > 1 && pk[0]->name == col) swap = " swap the key order to put " + pk[1]->name + " before " + col + ";";
    a.advice = "Spread the inserts over the key space: lead the partition key with a hash prefix or bucket, e.g. "
               "PRIMARY KEY ((bucket, " + KeyColumns(pk) + ")) with bucket = hash of another column mod 16 (reads fan "
               "out over the 16 buckets);" + swap + " bit-reverse a sequence number; use a random UUID instead of " +
               col + "; or create the table WITH distribution = 'hash'.";
    out->push_back(std::move(a));
    return;
  }
}

// A hot partition of a partition-bucketed table: the database spreads it itself.
KeyAdvice PartitionBucketsAdvice(Database& db, const TableSchema& t, const HotPartition& hot, KeyAdvice a) {
  a.kind = "partition_buckets";
  std::string logical;
  Token token;
  std::vector<std::string_view> pk(hot.partition_key.begin(), hot.partition_key.end());
  const uint32_t n = EncodePartitionPosition(t, pk, &logical, &token).ok()
                         ? t.partition_buckets.CountsFor(EncodedPartitionKeyOf(t, logical)).back()
                         : 1;
  std::string when;
  for (const auto& e : db.TabletEvents()) {
    if (e.table_id == t.id && e.kind == "partition_buckets" && e.reason.find(" " + a.subject + " ") != std::string::npos) {
      when = " (" + e.reason + ")";
    }
  }
  if (n > 1) {
    a.advice = "Nothing to change: partition_buckets" + std::string(t.partition_buckets.automatic ? " = 'auto'" : "") +
               " spreads this partition's rows over " + std::to_string(n) + " sub-partitions by clustering key" + when +
               ", which the balancer splits onto tablets of their own; reads of the partition merge them in "
               "clustering order, and static columns and partition deletions keep whole-partition meaning.";
  } else {
    a.advice = "partition_buckets = 'auto' raises this partition's sub-partition count when the balancer holds its "
               "tablet as a hot partition; nothing to change.";
  }
  return a;
}

void HotPartitionAdvice(Database& db, const TableSchema& t, std::vector<KeyAdvice>* out) {
  for (bool writes : {true, false}) {
    uint64_t total = 0;
    auto top = db.HotPartitions(t, writes, 1, &total);
    if (top.empty() || total < kMinOperations) continue;
    const double share = static_cast<double>(top[0].count - top[0].error) / static_cast<double>(total);
    if (share < 0.5) continue;
    const int buckets = BucketsForShare(share);
    const std::string what = writes ? "writes" : "reads";
    const std::string key = PartitionKeyLiteral(t, top[0].partition_key);
    KeyAdvice a{t.keyspace, t.name, "hot_partition", key, share, "", ""};
    a.evidence = "Partition " + key + " took " + Percent(share) + " of the table's " + std::to_string(total) + " " +
                 what + " (at least " + std::to_string(top[0].count - top[0].error) +
                 "); a partition is never split, so one tablet and one replica set serve all of it.";
    a.advice = "Split the partition into " + std::to_string(buckets) + " buckets: add bucket int to the partition key, "
               "PRIMARY KEY ((" + KeyColumns(t.PartitionKey()) + ", bucket)" +
               (t.Clustering().empty() ? "" : ", " + KeyColumns(t.Clustering())) +
               "), with bucket = hash of a clustering or request value mod " + std::to_string(buckets) +
               ". Expected spread: each bucket takes about " + Percent(share / buckets) + " of the table's " + what +
               " (" + std::to_string(total / static_cast<uint64_t>(buckets)) + " of " + std::to_string(total) +
               "); " + (writes ? "reads of the whole partition query all " + std::to_string(buckets) + " buckets."
                               : "writes go to one bucket, reads pick one at random.") +
               (t.Clustering().empty() ? "" : " Or let Tessera do it: a table created WITH partition_buckets = 'auto' "
                                              "spreads a hot partition by itself and reads it whole.");
    if (t.partition_buckets.enabled()) a = PartitionBucketsAdvice(db, t, top[0], std::move(a));
    out->push_back(std::move(a));
  }
}

void PartitionNearLimit(Database& db, const TableSchema& t, std::vector<KeyAdvice>* out) {
  const Guardrails& g = db.guardrails();
  const ColumnDef* time_column = nullptr;
  for (const auto* c : t.Clustering()) {
    const TypeKind k = c->type.kind();
    if (k == TypeKind::kTimestamp || k == TypeKind::kTimeuuid || k == TypeKind::kDate) {
      time_column = c;
      break;
    }
  }
  for (const auto& m : db.large_partitions().All()) {
    if (m.table_id != t.id) continue;
    const double rows = g.partition_rows_warn ? static_cast<double>(m.rows) / g.partition_rows_warn : 0;
    const double bytes = g.partition_bytes_warn ? static_cast<double>(m.bytes) / g.partition_bytes_warn : 0;
    const double fraction = std::max(rows, bytes);
    if (fraction < 0.5) continue;
    auto pk = DecodePartitionPosition(t, m.position);
    const std::string key = pk.ok() ? PartitionKeyLiteral(t, *pk) : "?";
    KeyAdvice a{t.keyspace, t.name, "partition_near_limit", key, fraction, "", ""};
    a.evidence = "Partition " + key + " holds " + std::to_string(m.rows) + " rows and " + std::to_string(m.bytes) +
                 " bytes: " + Percent(fraction) + " of the partition warn threshold (" +
                 std::to_string(g.partition_rows_warn) + " rows / " + std::to_string(g.partition_bytes_warn) +
                 " bytes); it keeps growing on one tablet.";
    const std::string bucket_of = time_column ? "the day (or hour) of " + time_column->name : "a row counter / 50000";
    a.advice = "Bound the partition with a time bucket in the partition key: PRIMARY KEY ((" +
               KeyColumns(t.PartitionKey()) + ", day)" +
               (t.Clustering().empty() ? "" : ", " + KeyColumns(t.Clustering())) + ") with day = " + bucket_of +
               ", so each partition covers one period and stays far below the limit.";
    out->push_back(std::move(a));
  }
}

void TombstoneHeavy(Database& db, const TableSchema& t, const std::map<uint32_t, TombstoneReport>& reports,
                    std::vector<KeyAdvice>* out) {
  auto it = reports.find(t.id);
  if (it == reports.end()) return;
  const TombstoneReport& r = it->second;
  const double ratio = static_cast<double>(r.max_tombstones) / static_cast<double>(r.max_tombstones + r.live_rows_at_max);
  KeyAdvice a{t.keyspace, t.name, "tombstone_heavy", t.name, ratio, "", ""};
  a.evidence = std::to_string(r.reads) + " reads visited more than " + std::to_string(db.guardrails().tombstone_warn) +
               " tombstones; the worst visited " + std::to_string(r.max_tombstones) + " tombstones for " +
               std::to_string(r.live_rows_at_max) + " live rows.";
  a.advice = "Let old data expire instead of deleting it: set a TTL (ALTER TABLE " + t.keyspace + "." + t.name +
             " WITH default_time_to_live = <seconds>, or USING TTL on insert), bucket the partition by time so whole "
             "buckets expire together, and read only live time ranges. gc_grace_seconds is " +
             std::to_string(t.options.gc_grace_seconds) + "; tombstones are purged only after it.";
  out->push_back(std::move(a));
}

}  // namespace

int BucketsForShare(double share) {
  int buckets = 2;
  while (buckets < 64 && share / buckets > 0.1) buckets *= 2;
  return buckets;
}

std::vector<KeyAdvice> ComputeKeyAdvice(Database& db) {
  std::vector<KeyAdvice> out;
  const auto reports = db.TombstoneReports();
  for (const auto& table : db.catalog().AllTables()) {
    MonotonicKey(db, *table, &out);
    HotPartitionAdvice(db, *table, &out);
    PartitionNearLimit(db, *table, &out);
    TombstoneHeavy(db, *table, reports, &out);
    for (auto& lint : LintTableDesign(*table, db.guardrails())) out.push_back(std::move(lint));
  }
  return out;
}

}  // namespace tessera
