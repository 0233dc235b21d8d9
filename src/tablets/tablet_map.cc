#include "tablets/tablet_map.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "keys/storage_key.h"

namespace tessera {
namespace {

// The share of a sample's weight at positions in [start, end); 0.5 for an
// empty sample (nothing says where the load was).
double SampleShare(const KeySample::Snapshot& sample, std::string_view start, std::string_view end) {
  double in = 0, all = 0;
  for (const auto& [key, weight] : sample.keys) {
    all += weight;
    if (start <= key && key < end) in += weight;
  }
  return all > 0 ? in / all : 0.5;
}

// `share` of `from`'s rate windows into `to`'s (the caller sets where
// `to`'s rates begin).
void InheritRates(const Tablet& from, double share, Tablet* to) {
  const TabletCounters& f = *from.counters;
  TabletCounters& t = *to->counters;
  t.read_rate.InheritFrom(f.read_rate, share);
  t.write_rate.InheritFrom(f.write_rate, share);
  t.read_bytes_rate.InheritFrom(f.read_bytes_rate, share);
  t.write_bytes_rate.InheritFrom(f.write_bytes_rate, share);
  t.replica_read_rate.InheritFrom(f.replica_read_rate, share);
  t.replica_write_rate.InheritFrom(f.replica_write_rate, share);
}

}  // namespace

TabletMap TabletMap::Create(const TableSchema& table, int64_t now) {
  TabletMap m;
  m.table_id_ = table.id;
  const std::string begin = TablePrefix(table.id), end = TablePrefix(table.id + 1);
  uint32_t n = table.distribution == Distribution::kHash ? table.options.initial_tablets : 1;
  std::vector<std::string> bounds{begin};
  // Equal token ranges: boundary i at INT64_MIN + i * 2^64 / n.
  for (uint32_t i = 1; i < n; ++i) {
    uint64_t offset = (uint64_t{i} << 32) / n << 32;  // i * 2^64 / n, exact for powers of two
    auto token = static_cast<Token>(static_cast<uint64_t>(kMinToken) + offset);
    bounds.push_back(begin + EncodeToken(token));
  }
  // Bucketed range tables: one tablet per bucket, so the buckets' writes land on different tablets at once.
  for (uint32_t b = 1; table.buckets.enabled() && b < table.buckets.current_count(); ++b) {
    bounds.push_back(BucketPrefix(table.id, b));
  }
  bounds.push_back(end);
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    Tablet t;
    t.id = m.next_id_++;
    t.start = bounds[i];
    t.end = bounds[i + 1];
    t.created_micros = now;
    m.tablets_.push_back(std::move(t));
  }
  return m;
}

const Tablet& TabletMap::Find(std::string_view key) const {
  auto it = std::upper_bound(tablets_.begin(), tablets_.end(), key,
                             [](std::string_view k, const Tablet& t) { return k < t.start; });
  return it == tablets_.begin() ? tablets_.front() : *std::prev(it);
}

const Tablet* TabletMap::FindById(TabletId id) const {
  for (const auto& t : tablets_) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

Result<std::pair<TabletId, TabletId>> TabletMap::Split(TabletId id, std::string split_key, int64_t now) {
  auto it = std::find_if(tablets_.begin(), tablets_.end(), [&](const Tablet& t) { return t.id == id; });
  if (it == tablets_.end()) return Status::NotFound("no tablet " + std::to_string(id));
  if (!(it->start < split_key && split_key < it->end)) {
    return Status::InvalidArgument("split key is not strictly inside tablet " + std::to_string(id));
  }
  Tablet left, right;
  left.id = next_id_++;
  right.id = next_id_++;
  left.start = it->start;
  left.end = split_key;
  right.start = std::move(split_key);
  right.end = it->end;
  left.created_micros = right.created_micros = now;
  // The halves keep what the parent's sample saw of their ranges, so that a
  // tail (or a skew) is still recognised right after the split, and their
  // shares of its rates, so that neither reads as idle for its first second
  // (a node that just split its hot tablet would look cold to the placement
  // balancer).
  left.counters->sample.InheritFrom(it->counters->sample, left.start, left.end);
  right.counters->sample.InheritFrom(it->counters->sample, right.start, right.end);
  const double left_share = SampleShare(it->counters->sample.Take(now), left.start, left.end);
  InheritRates(*it, left_share, &left);
  InheritRates(*it, 1.0 - left_share, &right);
  left.counters->rates_since_micros = right.counters->rates_since_micros = it->rates_since_micros();
  const std::pair<TabletId, TabletId> ids{left.id, right.id};
  *it = std::move(left);
  tablets_.insert(std::next(it), std::move(right));  // invalidates `it`
  return ids;
}

Result<TabletId> TabletMap::Merge(TabletId left_id, int64_t now) {
  auto it = std::find_if(tablets_.begin(), tablets_.end(), [&](const Tablet& t) { return t.id == left_id; });
  if (it == tablets_.end()) return Status::NotFound("no tablet " + std::to_string(left_id));
  auto right = std::next(it);
  if (right == tablets_.end()) return Status::InvalidArgument("tablet " + std::to_string(left_id) + " is the last one");
  Tablet merged;
  merged.id = next_id_++;
  merged.start = it->start;
  merged.end = right->end;
  merged.created_micros = now;
  InheritRates(*it, 1.0, &merged);
  InheritRates(*right, 1.0, &merged);
  merged.counters->rates_since_micros = std::min(it->rates_since_micros(), right->rates_since_micros());
  const TabletId id = merged.id;
  *it = std::move(merged);
  tablets_.erase(right);
  return id;
}

std::string TabletMap::ToJson() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& t : tablets_) {
    arr.push_back({{"id", t.id}, {"start", ToHex(t.start)}, {"end", ToHex(t.end)}, {"created_micros", t.created_micros}});
  }
  return nlohmann::json{{"format", 1}, {"table_id", table_id_}, {"next_id", next_id_}, {"tablets", arr}}.dump();
}

Result<TabletMap> TabletMap::FromJson(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    if (j.at("format").get<int>() != 1) return Status::Corruption("unsupported tablet map format");
    TabletMap m;
    m.table_id_ = j.at("table_id").get<uint32_t>();
    m.next_id_ = j.at("next_id").get<TabletId>();
    for (const auto& e : j.at("tablets")) {
      Tablet t;
      t.id = e.at("id").get<TabletId>();
      if (!FromHex(e.at("start").get<std::string>(), &t.start) || !FromHex(e.at("end").get<std::string>(), &t.end)) {
        return Status::Corruption("bad tablet bounds");
      }
      t.created_micros = e.at("created_micros").get<int64_t>();
      m.tablets_.push_back(std::move(t));
    }
    if (m.tablets_.empty()) return Status::Corruption("tablet map without tablets");
    return m;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("tablet map: ") + e.what());
  }
}

}  // namespace tessera
