#include "db/tablet_balancer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/thread_name.h"
#include "db/database.h"
#include "keys/storage_key.h"

namespace tessera {

TabletBalancer::TabletBalancer(Database* db, BalancerOptions options) : db_(db), options_(std::move(options)) {}

TabletBalancer::~TabletBalancer() { Stop(); }

void TabletBalancer::Start() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] {
    SetCurrentThreadName("tablet-balance");
    Loop();
  });
}

void TabletBalancer::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TabletBalancer::Loop() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stopping_) {
    stop_cv_.wait_for(lock, std::chrono::microseconds(options_.interval_micros), [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    RunOnce();
    lock.lock();
  }
}

std::vector<TabletHold> TabletBalancer::Holds() const {
  std::lock_guard<std::mutex> lock(holds_mu_);
  std::vector<TabletHold> out;
  for (const auto& [key, hold] : holds_) out.push_back(hold);
  return out;
}

void TabletBalancer::RunOnce() {
  std::lock_guard<std::mutex> round(round_mu_);
  std::set<uint32_t> live;
  for (const auto& table : db_->catalog().AllTables()) {
    live.insert(table->id);
    RunTable(table->id);
  }
  // Sizes must drop once data is range-deleted (a dropped table, a moved
  // replica), or the next rounds and the cluster's load reports count it.
  if (auto reclaimed = db_->ReclaimDeletedRanges(); !reclaimed.ok()) {
    spdlog::warn("tablets: compacting range-deleted data failed: {}", reclaimed.status().ToString());
  }
  std::erase_if(hot_since_, [&](const auto& e) { return !live.count(e.first); });
  std::erase_if(unsplittable_, [&](const auto& e) { return !live.count(e.first); });
  std::erase_if(last_bucket_raise_, [&](const auto& e) { return !live.count(e.first); });
  std::erase_if(last_partition_raise_, [&](const auto& e) { return !live.count(e.first.first); });
  {
    std::lock_guard<std::mutex> lock(holds_mu_);
    std::erase_if(holds_, [&](const auto& e) { return !live.count(e.first.first); });
  }
  MeasureLargePartitions();
}

void TabletBalancer::RunTable(uint32_t table_id) {
  auto table = db_->catalog().GetTableById(table_id);
  if (!table) return;
  TableLoad load = db_->TabletLoads(*table);
  VerifySizes(*table, &load);
  const int64_t now = db_->NowMicros();
  auto decisions = PlanTable(load, options_, now, &hot_since_[table_id]);

  std::map<std::pair<uint32_t, TabletId>, TabletHold> holds;
  auto hold = [&](TabletId tablet, std::string condition, std::string reason) {
    TabletHold h{table_id, tablet, std::move(condition), std::move(reason), now};
    bool goes_on = false;
    {
      std::lock_guard<std::mutex> lock(holds_mu_);
      auto prev = holds_.find({table_id, tablet});
      goes_on = prev != holds_.end() && prev->second.condition == h.condition;
      if (goes_on) h.since_micros = prev->second.since_micros;
    }
    if (!goes_on) {  // a new hold: one event, not one per round
      spdlog::info("tablets: {}.{} tablet {}: {}", table->keyspace, table->name, tablet, h.reason);
      db_->RecordTabletEvent({now, table_id, "hold", {tablet}, {}, h.condition + ": " + h.reason});
    }
    holds[{table_id, tablet}] = std::move(h);
  };
  const bool cluster = db_->cluster_tablets();
  // A table whose resizes another node decides gets this round's splits and
  // merges as proposals (every round, so that a proposal stands while it holds).
  ResizeProposals* const proposals = proposals_.load();
  const bool propose = proposals != nullptr && proposals->DecidedElsewhere(*table);
  std::vector<ResizeProposal> proposed;
  auto tablet_at = [&](TabletId id) {
    return std::find_if(load.tablets.begin(), load.tablets.end(), [&](const TabletLoad& x) { return x.id == id; });
  };
  for (const auto& d : decisions) {
    if (propose && d.kind != BalancerDecision::Kind::kHold) {
      auto t = tablet_at(d.tablet);
      if (t == load.tablets.end()) continue;
      ResizeProposal p;
      p.reason = d.reason;
      p.start = t->start;
      if (d.kind == BalancerDecision::Kind::kSplit) {
        p.kind = ResizeProposal::Kind::kSplit;
        p.end = t->end;
        p.split_position = d.split_position;
        if (!p.split_position) {
          // The cut is found here, where the tablet is stored (the leader
          // may hold no replica of it, and would read it over the network).
          auto middle = db_->MiddleSplitPosition(*table, d.tablet);
          if (!middle.ok() && middle.status().IsInvalidArgument()) {
            hold(d.tablet, "single_partition", "size split declined: the tablet's only partition cannot be split");
            continue;
          }
          if (middle.ok()) p.split_position = *middle;
        }
      } else {
        auto right = std::next(t);
        if (right == load.tablets.end()) continue;
        p.kind = ResizeProposal::Kind::kMerge;
        p.boundary = right->start;
        p.end = right->end;
      }
      proposed.push_back(std::move(p));
      continue;
    }
    switch (d.kind) {
      case BalancerDecision::Kind::kHold:
        hold(d.tablet, d.condition, d.reason);
        if (cluster) break;  // bucket counts change only on a single node (Database::ChangeBucketCount)
        if (d.condition == "append_tail" && table->buckets.automatic) RaiseBuckets(*table, d.reason, now);
        if (d.condition != "append_tail" && table->partition_buckets.automatic) RaiseHotPartition(*table, load, d, now);
        break;
      case BalancerDecision::Kind::kSplit: {
        // A raise splits the tablets at the new buckets' starts itself; the next round re-plans.
        if (!cluster && table->buckets.automatic && RaiseBucketsForGrowingTail(*table, load, d, now)) break;
        if (!d.split_position && unsplittable_.count({table_id, d.tablet})) {
          hold(d.tablet, "single_partition", "size split declined: the tablet's only partition cannot be split");
          break;
        }
        auto split = db_->SplitTablet(*table, d.tablet, d.split_position, d.reason);
        if (split.ok() && !d.split_position) {
          // Each half of a median split holds about half of the counted bytes.
          auto parent = counted_.find({table_id, d.tablet});
          const uint64_t half = parent == counted_.end() ? 0 : parent->second.bytes / 2;
          counted_[{table_id, split->first}] = Counted{half, 0};
          counted_[{table_id, split->second}] = Counted{half, 0};
        }
        if (split.ok()) {
          spdlog::info("tablets: {}.{} split tablet {} into {} and {}: {}", table->keyspace, table->name, d.tablet,
                       split->first, split->second, d.reason);
        } else if (split.status().IsInvalidArgument() && !d.split_position) {
          unsplittable_.insert({table_id, d.tablet});
        } else {
          spdlog::warn("tablets: split of {}.{} tablet {} failed: {}", table->keyspace, table->name, d.tablet,
                       split.status().ToString());
        }
        break;
      }
      case BalancerDecision::Kind::kMerge: {
        if (unmergeable_.count({table_id, d.tablet})) break;
        auto merged = db_->MergeTablets(*table, d.tablet, d.reason);
        if (!merged.ok() && merged.status().IsInvalidArgument()) {
          // A cluster refuses to join tablets of different replica sets: not again for this pair.
          unmergeable_.insert({table_id, d.tablet});
          break;
        }
        if (merged.ok()) {
          spdlog::info("tablets: {}.{} merged tablet {} and its neighbour into {}: {}", table->keyspace, table->name,
                       d.tablet, *merged, d.reason);
        } else {
          spdlog::warn("tablets: merge in {}.{} failed: {}", table->keyspace, table->name, merged.status().ToString());
        }
        break;
      }
    }
  }
  if (propose) proposals->Propose(*table, std::move(proposed));
  std::lock_guard<std::mutex> lock(holds_mu_);
  std::erase_if(holds_, [&](const auto& e) { return e.first.first == table_id; });
  holds_.merge(holds);
}

bool TabletBalancer::RaiseBucketsForGrowingTail(const TableSchema& table, const TableLoad& load,
                                                const BalancerDecision& split, int64_t now) {
  auto t = std::find_if(load.tablets.begin(), load.tablets.end(), [&](const TabletLoad& x) { return x.id == split.tablet; });
  // Not IsHot: the rate of a tablet a few rounds old is not known yet, and an append-only tail
  // that outgrows the split size again and again is the hot spot itself.
  if (t == load.tablets.end() || !IsAppendTail(*t, options_)) return false;
  return RaiseBuckets(table,
               "the hot tail grows: " + split.reason + ", and " + std::to_string(t->sample.writes) +
                   " recent writes went past, or close behind, the tablet's greatest key (an append-only tail)",
               now);
}

bool TabletBalancer::RaiseBuckets(const TableSchema& table, const std::string& reason, int64_t now) {
  auto last = last_bucket_raise_.find(table.id);
  if (last != last_bucket_raise_.end() && now - last->second < kBucketRaiseGapMicros) return false;
  const uint32_t current = table.buckets.current_count();
  const uint32_t next = std::min(BucketLayout::kMaxBuckets, std::max(kFirstAutoBuckets, current * 2));
  if (next <= current) return false;
  last_bucket_raise_[table.id] = now;
  auto changed = db_->ChangeBucketCount(table, next, "buckets = 'auto' under a tail hotspot: " + reason);
  if (changed.ok()) {
    spdlog::info("tablets: {}.{} buckets {} -> {}: {}", table.keyspace, table.name, current, next, reason);
    return true;
  }
  spdlog::warn("tablets: raising the buckets of {}.{} failed: {}", table.keyspace, table.name,
               changed.status().ToString());
  return false;
}

void TabletBalancer::RaiseHotPartition(const TableSchema& table, const TableLoad& load, const BalancerDecision& hold,
                                       int64_t now) {
  auto t = std::find_if(load.tablets.begin(), load.tablets.end(), [&](const TabletLoad& x) { return x.id == hold.tablet; });
  if (t == load.tablets.end() || t->sample.keys.empty()) return;
  auto heaviest = std::max_element(t->sample.keys.begin(), t->sample.keys.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
  RaisePartitionBuckets(table, heaviest->first, "a hot partition: " + hold.condition + ": " + hold.reason, now);
}

void TabletBalancer::RaisePartitionBuckets(const TableSchema& table, const std::string& position,
                                           const std::string& reason, int64_t now) {
  auto size = LogicalPartitionPositionSize(table, position);
  if (!size.ok()) return;
  const std::string logical = position.substr(0, *size);
  auto& last = last_partition_raise_[{table.id, logical}];
  if (last != 0 && now - last < kBucketRaiseGapMicros) return;
  const uint32_t current = table.partition_buckets.CountsFor(EncodedPartitionKeyOf(table, logical)).back();
  const uint32_t next = std::min(PartitionBucketLayout::kMaxCount, std::max(kFirstAutoPartitionBuckets, current * 2));
  if (next <= current) return;
  last = now;
  auto changed = db_->ChangePartitionBuckets(table, logical, next, "partition_buckets = 'auto' under " + reason);
  if (changed.ok()) {
    spdlog::info("tablets: {}.{} partition buckets of a partition {} -> {}: {}", table.keyspace, table.name, current,
                 next, reason);
  } else {
    spdlog::warn("tablets: raising the partition buckets of a partition of {}.{} failed: {}", table.keyspace,
                 table.name, changed.status().ToString());
  }
}

void TabletBalancer::VerifySizes(const TableSchema& table, TableLoad* load) {
  const uint64_t threshold = options_.split_size_bytes;
  for (auto& t : load->tablets) {
    const auto key = std::make_pair(table.id, t.id);
    auto it = counted_.find(key);
    const uint64_t known = it == counted_.end() ? 0 : it->second.bytes;
    const uint64_t written_since = t.bytes_written - (it == counted_.end() ? 0 : it->second.bytes_written);
    // Possibly above the threshold: by RocksDB's estimate, or by what is
    // known flushed or counted plus what was written since.
    const bool maybe_large = t.size_bytes > threshold || std::max(t.flushed_bytes, known) + written_since > threshold;
    if (!maybe_large) {
      t.size_bytes = std::min<uint64_t>(t.size_bytes, threshold);
      // Below an eighth of the limit, an estimate is trusted: a pair of such
      // tablets is mergeable anyway.
      if (t.size_bytes >= MergeLimit() / 8 && t.age_micros >= options_.merge_min_age_micros) {
        t.size_bytes = std::min(t.size_bytes, VerifiedSmallSize(table, t));
      }
      continue;
    }
    if (it != counted_.end() && written_since < threshold / 10) {
      t.size_bytes = known + written_since;
      continue;
    }
    auto bytes = db_->MeasureTabletBytes(table, t.id, threshold);
    if (!bytes.ok()) continue;
    counted_[key] = Counted{*bytes, t.bytes_written};
    t.size_bytes = *bytes;
  }
  for (auto* counted : {&counted_, &counted_small_}) {
    std::erase_if(*counted, [&](const auto& e) {
      if (e.first.first != table.id) return false;
      return std::none_of(load->tablets.begin(), load->tablets.end(),
                          [&](const TabletLoad& t) { return t.id == e.first.second; });
    });
  }
}

uint64_t TabletBalancer::MergeLimit() const {
  return static_cast<uint64_t>(options_.merge_fraction * static_cast<double>(options_.split_size_bytes));
}

// RocksDB estimates a memtable's share of a range as the number of entries
// in it (itself estimated) times the memtable's average entry size. A small
// table of small rows, written into a memtable full of a larger table's large
// rows, is judged many times its size: too large to merge, for as long as
// the memtable lives (seen on a 3-node cluster as a flaky test). A count of
// at most the merge limit settles it.
uint64_t TabletBalancer::VerifiedSmallSize(const TableSchema& table, const TabletLoad& t) {
  const auto key = std::make_pair(table.id, t.id);
  const uint64_t limit = MergeLimit();
  auto it = counted_small_.find(key);
  if (it != counted_small_.end()) {
    // Writes only add bytes, so a count above the limit stands (the tablet
    // merges once its estimate falls below the limit); a count below it
    // stands until a quarter of the limit more was written.
    const uint64_t written_since = t.bytes_written - it->second.bytes_written;
    if (it->second.bytes > limit || written_since < limit / 4) return it->second.bytes + written_since;
  }
  auto bytes = db_->MeasureTabletBytes(table, t.id, limit);
  if (!bytes.ok()) return t.size_bytes;
  counted_small_[key] = Counted{*bytes, t.bytes_written};
  return *bytes;
}

void TabletBalancer::MeasureLargePartitions() {
  for (auto& [table_id, position] : db_->large_partitions().TakePending()) {
    auto table = db_->catalog().GetTableById(table_id);
    if (!table) continue;
    auto measured = db_->MeasurePartition(*table, position);
    if (measured.status().IsNotFound()) continue;  // dropped, or stored elsewhere: its replicas measure it
    if (!measured.ok()) {
      spdlog::warn("tablets: measuring a partition of {}.{} failed: {}", table->keyspace, table->name,
                   measured.status().ToString());
      continue;
    }
    db_->large_partitions().Record(*measured);
    if (table->partition_buckets.automatic && db_->guardrails().PartitionAboveWarn(measured->rows, measured->bytes)) {
      RaisePartitionBuckets(*table, position,
                            "a large partition: " + std::to_string(measured->rows) + " rows, " +
                                std::to_string(measured->bytes) + " bytes, above the partition warn threshold",
                            db_->NowMicros());
    }
  }
}

}  // namespace tessera
