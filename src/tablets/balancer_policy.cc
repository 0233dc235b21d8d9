#include "tablets/balancer_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessera {
namespace {

constexpr size_t kHashCutSize = 4 + 8;  // table prefix + token: hash tables cut between tokens

std::string Percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100);
  return buf;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string Size(double bytes) {
  char buf[32];
  if (bytes >= (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024);
  }
  return buf;
}

struct Cut {
  std::string position;
  double left_share = 0;
  double heavier_share() const { return std::max(left_share, 1 - left_share); }
};

// The sampled key that splits the tablet's sampled load most evenly, as a
// partition boundary strictly inside the tablet: closest to `share` of it on
// one side (either side; 0.5: in halves). nullopt: fewer than two distinct
// candidates.
std::optional<Cut> BalancedCut(const TabletLoad& t, bool hash, double share = 0.5) {
  std::vector<std::pair<std::string, double>> candidates;
  double total = 0;
  for (const auto& [key, weight] : t.sample.keys) {
    std::string cut = hash ? key.substr(0, std::min(key.size(), kHashCutSize)) : key;
    if (!candidates.empty() && candidates.back().first == cut) {
      candidates.back().second += weight;
    } else {
      candidates.emplace_back(std::move(cut), weight);
    }
    total += weight;
  }
  if (candidates.size() < 2 || total <= 0) return std::nullopt;
  std::optional<Cut> best;
  double left = 0, best_imbalance = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    left += candidates[i - 1].second;
    const std::string& pos = candidates[i].first;
    if (pos <= t.start || pos >= t.end) continue;
    double imbalance = std::min(std::abs(left - share * total), std::abs(left - (1 - share) * total));
    if (!best || imbalance < best_imbalance) {
      best = Cut{pos, left / total};
      best_imbalance = imbalance;
    }
  }
  return best;
}

std::string LoadText(const TabletLoad& t) {
  return Number(t.rows_per_second) + " rows/s (" + Number(t.writes_per_second) + " written), " +
         Size(t.bytes_per_second) + "/s";
}

std::optional<BalancerDecision> Hold(const TabletLoad& t, bool hash, const BalancerOptions& o) {
  BalancerDecision d;
  d.kind = BalancerDecision::Kind::kHold;
  d.tablet = t.id;
  if (IsAppendTail(t, o)) {
    d.condition = "append_tail";
    d.reason = "split declined: " + Percent(TailShare(t.sample)) + " of " + std::to_string(t.sample.writes) +
               " recent writes went past, or close behind, the tablet's greatest key (an append-only tail); a split would only "
               "move the hot spot to the new last tablet. Load " + LoadText(t);
    return d;
  }
  if (t.sample.keys.size() == 1) {
    d.condition = "single_partition";
    d.reason = "split declined: all sampled load is on one partition, and a partition is never split. Load " +
               LoadText(t);
    return d;
  }
  auto cut = BalancedCut(t, hash);  // `hash`: cut at token boundaries
  if (cut && cut->heavier_share() > o.max_side_share) {
    d.condition = "skewed_partition";
    d.reason = "split declined: the best cut would leave " + Percent(cut->heavier_share()) +
               " of the sampled load on one side (one partition dominates). Load " + LoadText(t);
    return d;
  }
  return std::nullopt;
}

std::optional<BalancerDecision> Merge(const TableLoad& table, const BalancerOptions& o, const HotSince& hot) {
  const auto& ts = table.tablets;
  if (ts.size() <= std::max<size_t>(1, table.min_tablets)) return std::nullopt;
  for (size_t i = 0; i + 1 < ts.size(); ++i) {
    const TabletLoad& a = ts[i];
    const TabletLoad& b = ts[i + 1];
    if (a.age_micros < o.merge_min_age_micros || b.age_micros < o.merge_min_age_micros) continue;
    if (hot.count(a.id) || hot.count(b.id)) continue;
    const double rows = a.rows_per_second + b.rows_per_second;
    const double bytes = a.bytes_per_second + b.bytes_per_second;
    const double size = static_cast<double>(a.size_bytes + b.size_bytes);
    if (rows >= o.merge_fraction * o.split_rows_per_second) continue;
    if (bytes >= o.merge_fraction * o.split_bytes_per_second) continue;
    if (size >= o.merge_fraction * static_cast<double>(o.split_size_bytes)) continue;
    BalancerDecision d;
    d.kind = BalancerDecision::Kind::kMerge;
    d.tablet = a.id;
    d.reason = "merge: small and cold neighbours " + std::to_string(a.id) + " and " + std::to_string(b.id) +
               " together " + Number(rows) + " rows/s, " + Size(size) + "; below " +
               Percent(o.merge_fraction) + " of the split thresholds";
    return d;
  }
  return std::nullopt;
}

}  // namespace

bool IsHot(const TabletLoad& t, const BalancerOptions& o) {
  return t.rows_per_second > o.split_rows_per_second || t.bytes_per_second > o.split_bytes_per_second;
}

double TailShare(const KeySample::Snapshot& s) {
  if (s.writes == 0) return 0;
  return static_cast<double>(s.advances + s.near_tail) / static_cast<double>(s.writes);
}

bool IsAppendTail(const TabletLoad& t, const BalancerOptions& o) {
  const auto& s = t.sample;
  return s.writes >= o.min_sampled_writes && s.advances >= 2 && s.keys.size() >= 2 && TailShare(s) >= o.append_share &&
         static_cast<double>(s.advances) >= o.min_advance_share * static_cast<double>(s.writes);
}

std::optional<std::string> LoadSplitPosition(const TableLoad& table, const TabletLoad& t, const BalancerOptions& o,
                                             std::string* refusal, double share, double* left_share) {
  const bool hash = table.hash && !table.sub_partitions;
  if (auto hold = Hold(t, hash, o)) {
    *refusal = hold->condition + ": " + hold->reason;
    return std::nullopt;
  }
  auto cut = BalancedCut(t, hash, std::clamp(share, 0.0, 0.5));
  if (!cut) {
    *refusal = "split declined: fewer than two sampled partitions inside the tablet (" +
               std::to_string(t.sample.keys.size()) + " sampled)";
    return std::nullopt;
  }
  if (left_share) *left_share = cut->left_share;
  return cut->position;
}

std::vector<BalancerDecision> PlanTable(const TableLoad& table, const BalancerOptions& o, int64_t now,
                                        HotSince* hot_since) {
  std::vector<BalancerDecision> out;
  bool acted = false;
  const bool room = table.tablets.size() < o.max_tablets_per_table;
  HotSince still_hot;
  for (const TabletLoad& t : table.tablets) {
    if (!IsHot(t, o)) continue;
    auto prev = hot_since->find(t.id);
    const int64_t since = prev == hot_since->end() ? now : prev->second;
    still_hot[t.id] = since;
    if (auto hold = Hold(t, table.hash && !table.sub_partitions, o)) {
      out.push_back(std::move(*hold));
      continue;
    }
    if (acted || !room || now - since < o.split_sustain_micros) continue;
    auto cut = BalancedCut(t, table.hash && !table.sub_partitions);
    if (!cut) continue;
    BalancerDecision d;
    d.kind = BalancerDecision::Kind::kSplit;
    d.tablet = t.id;
    d.split_position = cut->position;
    d.reason = "load: " + LoadText(t) + " above " + Number(o.split_rows_per_second) + " rows/s for " +
               Number(static_cast<double>(now - since) / 1e6) + " s; cut at the weighted median of " +
               std::to_string(t.sample.keys.size()) + " sampled partitions (" + Percent(cut->left_share) + " / " +
               Percent(1 - cut->left_share) + ")";
    out.push_back(std::move(d));
    acted = true;
  }
  *hot_since = std::move(still_hot);
  for (const TabletLoad& t : table.tablets) {
    if (acted || !room) break;
    if (t.size_bytes <= o.split_size_bytes) continue;
    BalancerDecision d;
    d.kind = BalancerDecision::Kind::kSplit;
    d.tablet = t.id;
    d.reason = "size: " + Size(static_cast<double>(t.size_bytes)) + " above " +
               Size(static_cast<double>(o.split_size_bytes)) + "; cut at the median partition";
    out.push_back(std::move(d));
    acted = true;
  }
  if (!acted) {
    if (auto m = Merge(table, o, *hot_since)) out.push_back(std::move(*m));
  }
  return out;
}

}  // namespace tessera
