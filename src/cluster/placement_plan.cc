#include "cluster/placement_plan.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

namespace tessera::cluster {
namespace {

bool Holds(const TabletPlacementLoad& t, const std::string& host) {
  return std::find(t.replicas.begin(), t.replicas.end(), host) != t.replicas.end();
}

double MeanLoad(const std::vector<NodePlacementLoad>& nodes) {
  double total = 0;
  for (const auto& n : nodes) total += n.load;
  return total / static_cast<double>(nodes.size());
}

double MeanBytes(const std::vector<NodePlacementLoad>& nodes) {
  double total = 0;
  for (const auto& n : nodes) total += static_cast<double>(n.bytes);
  return total / static_cast<double>(nodes.size());
}

double MeanCount(const std::vector<NodePlacementLoad>& nodes) {
  double total = 0;
  for (const auto& n : nodes) total += n.tablets;
  return total / static_cast<double>(nodes.size());
}

// Whether rule 1 would move a replica with these counts.
bool CountsUnbalanced(const std::vector<NodePlacementLoad>& nodes, const PlacementPlanOptions& o) {
  auto [min, max] = std::minmax_element(nodes.begin(), nodes.end(),
                                        [](const auto& a, const auto& b) { return a.tablets < b.tablets; });
  return max->tablets - min->tablets >= 2 && max->tablets > o.max_over_mean * MeanCount(nodes);
}

// Whether rule 2 acts on a node storing `bytes` where the mean is `mean`.
bool BytesAbove(double bytes, double mean, const PlacementPlanOptions& o) {
  return bytes > o.bytes_max_over_mean * mean && bytes - mean >= static_cast<double>(o.min_bytes);
}

// Whether rule 3 acts on a node serving `load` where the mean is `mean`.
bool LoadAbove(double load, double mean, const PlacementPlanOptions& o) {
  return load > o.load_max_over_mean * mean && load - mean >= o.min_load_per_second;
}

// What a move is judged by: the higher of the two nodes' loads and the
// larger of their bytes afterwards, weighted (a weight 0 ignores one).
struct Weights {
  double load = 1, bytes = 0;
};

struct Candidate {
  size_t tablet = 0;
  double peak = 0;        // the higher of the two nodes' loads after the move
  double peak_bytes = 0;  // the larger of the two nodes' bytes after the move
  double cost = 0;
};

// The tablet on `from` but not on `to` (and `allowed`, when given) whose
// move leaves the weighted peaks lowest (ties: the colder, then the smaller).
// A move within `slack` of the lowest cost counts as a tie: the colder,
// smaller tablet is then moved, as moving load for a gain that small only
// churns (and hands the balancer's load rule work).
std::optional<Candidate> BestMove(const std::vector<TabletPlacementLoad>& tablets, const NodePlacementLoad& from,
                                  const NodePlacementLoad& to, Weights w,
                                  const std::function<bool(const TabletPlacementLoad&)>& allowed = nullptr,
                                  double slack = 0) {
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < tablets.size(); ++i) {
    const auto& t = tablets[i];
    if (t.moving || !Holds(t, from.host_id) || Holds(t, to.host_id) || (allowed && !allowed(t))) continue;
    Candidate c{i, std::max(from.load - t.load, to.load + t.load),
                std::max(static_cast<double>(from.bytes) - static_cast<double>(t.bytes),
                         static_cast<double>(to.bytes + t.bytes)),
                0};
    c.cost = w.load * c.peak + w.bytes * c.peak_bytes;
    candidates.push_back(c);
  }
  if (candidates.empty()) return std::nullopt;
  double lowest = candidates.front().cost;
  for (const auto& c : candidates) lowest = std::min(lowest, c.cost);
  std::optional<Candidate> best;
  for (const auto& c : candidates) {
    if (c.cost > lowest + slack) continue;
    const auto& t = tablets[c.tablet];
    if (!best || t.load < tablets[best->tablet].load ||
        (t.load == tablets[best->tablet].load && t.bytes < tablets[best->tablet].bytes)) {
      best = c;
    }
  }
  return best;
}

std::string Rate(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string MiB(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1 << 20));
  return buf;
}

// Rule 1's weights: load and bytes each relative to its mean; bytes only
// once the largest node is half of min_bytes above the mean (below that
// they are noise next to load, and rule 2 would not act on them anyway).
Weights CountWeights(const std::vector<NodePlacementLoad>& nodes, const PlacementPlanOptions& o) {
  const double load = MeanLoad(nodes), bytes = MeanBytes(nodes);
  uint64_t largest = 0;
  for (const auto& n : nodes) largest = std::max(largest, n.bytes);
  const bool material = static_cast<double>(largest) - bytes >= static_cast<double>(o.min_bytes) / 2;
  return {load > 0 ? 1 / load : 0, bytes > 0 && material ? 1 / bytes : 0};
}

PlacementDecision CountMove(const std::string& dc, const std::vector<NodePlacementLoad>& nodes,
                            const std::vector<TabletPlacementLoad>& tablets, const PlacementPlanOptions& o) {
  // Fullest (the busiest among them) and emptiest (the least busy among them).
  const NodePlacementLoad* max = &nodes.front();
  const NodePlacementLoad* min = &nodes.front();
  for (const auto& n : nodes) {
    if (n.tablets > max->tablets || (n.tablets == max->tablets && n.load > max->load)) max = &n;
    if (n.tablets < min->tablets || (n.tablets == min->tablets && n.load < min->load)) min = &n;
  }
  // Counts are what this rule balances; a move whose load or bytes gain is
  // under min_load_gain of the two nodes' current peak moves the coldest,
  // smallest tablet instead (seen: the fullest node's 127 requests/s tablet
  // moved to the emptiest for a peak 2 lower than a cold one's, and the
  // emptiest became the busiest node).
  const Weights w = CountWeights(nodes, o);
  const double peak_now = w.load * std::max(max->load, min->load) +
                          w.bytes * static_cast<double>(std::max(max->bytes, min->bytes));
  auto move = BestMove(tablets, *max, *min, w, nullptr, o.min_load_gain * peak_now);
  if (!move) return {};
  PlacementDecision d;
  d.kind = PlacementDecision::Kind::kMove;
  d.tablet = move->tablet;
  d.from = max->host_id;
  d.to = min->host_id;
  char why[400];
  std::snprintf(why, sizeof why,
                "balance: %s holds %d tablet replicas, %s %d (mean %.1f in %s); this replica serves %s requests/s "
                "and stores %s (the nodes serve %s and %s)",
                max->address.c_str(), max->tablets, min->address.c_str(), min->tablets, MeanCount(nodes), dc.c_str(),
                Rate(tablets[move->tablet].load).c_str(), MiB(static_cast<double>(tablets[move->tablet].bytes)).c_str(),
                Rate(max->load).c_str(), Rate(min->load).c_str());
  d.reason = why;
  return d;
}

// Nodes and tablets after moving tablet `tablet` from nodes[from] to nodes[to].
void Apply(size_t tablet, size_t from, size_t to, std::vector<NodePlacementLoad>* nodes,
           std::vector<TabletPlacementLoad>* tablets) {
  auto& t = (*tablets)[tablet];
  std::replace(t.replicas.begin(), t.replicas.end(), (*nodes)[from].host_id, (*nodes)[to].host_id);
  --(*nodes)[from].tablets;
  ++(*nodes)[to].tablets;
  (*nodes)[from].load -= t.load;
  (*nodes)[to].load += t.load;
  (*nodes)[from].bytes -= std::min((*nodes)[from].bytes, t.bytes);
  (*nodes)[to].bytes += t.bytes;
}

// Rule 2, or a decision of kind kNone.
PlacementDecision BytesMove(const std::string& dc, const std::vector<NodePlacementLoad>& nodes,
                            const std::vector<TabletPlacementLoad>& tablets, const PlacementPlanOptions& o) {
  const double mean = MeanBytes(nodes), mean_load = MeanLoad(nodes);
  size_t largest = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (nodes[i].bytes > nodes[largest].bytes) largest = i;
  }
  const NodePlacementLoad& big = nodes[largest];
  if (!BytesAbove(static_cast<double>(big.bytes), mean, o)) return {};
  std::optional<Candidate> best;
  size_t best_to = 0;
  for (size_t j = 0; j < nodes.size(); ++j) {
    if (j == largest) continue;
    // Never so that the target serves more than rule 3 allows.
    auto move = BestMove(tablets, big, nodes[j], Weights{0, 1}, [&](const TabletPlacementLoad& t) {
      return t.load == 0 || !LoadAbove(nodes[j].load + t.load, mean_load, o);
    });
    if (!move || move->peak_bytes > static_cast<double>(big.bytes) * (1 - o.min_load_gain)) continue;
    // Rule 1's next move must not bring this replica back.
    std::vector<NodePlacementLoad> after_nodes = nodes;
    std::vector<TabletPlacementLoad> after_tablets = tablets;
    Apply(move->tablet, largest, j, &after_nodes, &after_tablets);
    if (CountsUnbalanced(after_nodes, o)) {
      PlacementDecision back = CountMove(dc, after_nodes, after_tablets, o);
      if (back.kind == PlacementDecision::Kind::kMove && back.tablet == move->tablet) continue;
    }
    if (!best || move->peak_bytes < best->peak_bytes) {
      best = move;
      best_to = j;
    }
  }
  if (!best) return {};
  PlacementDecision d;
  d.kind = PlacementDecision::Kind::kMove;
  d.tablet = best->tablet;
  d.from = big.host_id;
  d.to = nodes[best_to].host_id;
  char why[400];
  std::snprintf(why, sizeof why,
                "bytes: %s stores %s, %s %s (mean %s in %s); this replica stores %s, after the move the larger of "
                "the two stores %s",
                big.address.c_str(), MiB(static_cast<double>(big.bytes)).c_str(), nodes[best_to].address.c_str(),
                MiB(static_cast<double>(nodes[best_to].bytes)).c_str(), MiB(mean).c_str(), dc.c_str(),
                MiB(static_cast<double>(tablets[best->tablet].bytes)).c_str(), MiB(best->peak_bytes).c_str());
  d.reason = why;
  return d;
}

}  // namespace

void NodeLoads(const std::vector<TabletPlacementLoad>& tablets, std::vector<NodePlacementLoad>* nodes) {
  std::map<std::string, NodePlacementLoad*> by_host;
  for (auto& n : *nodes) {
    n.load = 0;
    n.bytes = 0;
    by_host[n.host_id] = &n;
  }
  for (const auto& t : tablets) {
    for (const auto& r : t.replicas) {
      if (auto n = by_host.find(r); n != by_host.end()) {
        n->second->load += t.load;
        n->second->bytes += t.bytes;
      }
    }
  }
}

PlacementDecision PlanPlacement(const std::string& dc, const std::vector<NodePlacementLoad>& nodes,
                                const std::vector<TabletPlacementLoad>& tablets, const PlacementPlanOptions& o,
                                bool loads_current) {
  if (nodes.size() < 2) return {};
  if (CountsUnbalanced(nodes, o)) {
    PlacementDecision d = CountMove(dc, nodes, tablets, o);
    if (d.kind != PlacementDecision::Kind::kNone) return d;
  }
  if (!loads_current) return {};
  if (PlacementDecision d = BytesMove(dc, nodes, tablets, o); d.kind != PlacementDecision::Kind::kNone) return d;
  const double mean = MeanLoad(nodes), mean_bytes = MeanBytes(nodes);
  size_t busiest = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (nodes[i].load > nodes[busiest].load) busiest = i;
  }
  const NodePlacementLoad& hot = nodes[busiest];
  if (!LoadAbove(hot.load, mean, o)) return {};

  // Rule 3: the best move off the busiest node that rules 1 and 2 would not undo.
  std::optional<Candidate> best;
  size_t best_to = 0;
  for (size_t j = 0; j < nodes.size(); ++j) {
    if (j == busiest) continue;
    // Never so that the target stores more than rule 2 allows.
    auto move = BestMove(tablets, hot, nodes[j], Weights{1, 0}, [&](const TabletPlacementLoad& t) {
      return t.bytes == 0 || !BytesAbove(static_cast<double>(nodes[j].bytes + t.bytes), mean_bytes, o);
    });
    if (!move || move->peak >= hot.load * (1 - o.min_load_gain)) continue;
    std::vector<NodePlacementLoad> after = nodes;
    --after[busiest].tablets;
    ++after[j].tablets;
    if (CountsUnbalanced(after, o)) continue;
    if (!best || move->peak < best->peak) {
      best = move;
      best_to = j;
    }
  }
  char why[400];
  if (best) {
    PlacementDecision d;
    d.kind = PlacementDecision::Kind::kMove;
    d.tablet = best->tablet;
    d.from = hot.host_id;
    d.to = nodes[best_to].host_id;
    std::snprintf(why, sizeof why,
                  "load: %s serves %s requests/s, %s %s (mean %s in %s); this replica serves %s, after the move the "
                  "busier of the two serves %s",
                  hot.address.c_str(), Rate(hot.load).c_str(), nodes[best_to].address.c_str(),
                  Rate(nodes[best_to].load).c_str(), Rate(mean).c_str(), dc.c_str(), Rate(tablets[best->tablet].load).c_str(),
                  Rate(best->peak).c_str());
    d.reason = why;
    return d;
  }

  // Rule 4: the hottest tablet on the busiest node, if it alone is the excess.
  std::optional<size_t> hottest;
  for (size_t i = 0; i < tablets.size(); ++i) {
    if (tablets[i].moving || !Holds(tablets[i], hot.host_id)) continue;
    if (!hottest || tablets[i].load > tablets[*hottest].load) hottest = i;
  }
  PlacementDecision d;
  d.from = hot.host_id;
  if (hottest && tablets[*hottest].load > hot.load - mean) {
    d.kind = PlacementDecision::Kind::kSplit;
    d.tablet = *hottest;
    size_t coldest = busiest == 0 ? 1 : 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i != busiest && nodes[i].load < nodes[coldest].load) coldest = i;
    }
    const double piece = std::min(hot.load - mean, mean - nodes[coldest].load);
    d.split_share = std::clamp(piece / tablets[*hottest].load, 0.1, 0.5);
    std::snprintf(why, sizeof why,
                  "load: %s serves %s requests/s (mean %s in %s) and no move lowers that; its hottest tablet serves "
                  "%s of them, more than the excess: split it so that a piece of %s can be placed apart (%s serves %s)",
                  hot.address.c_str(), Rate(hot.load).c_str(), Rate(mean).c_str(), dc.c_str(),
                  Rate(tablets[*hottest].load).c_str(), Rate(d.split_share * tablets[*hottest].load).c_str(),
                  nodes[coldest].address.c_str(), Rate(nodes[coldest].load).c_str());
    d.reason = why;
    return d;
  }
  d.kind = PlacementDecision::Kind::kRefusal;
  d.tablet = hottest.value_or(0);
  std::snprintf(why, sizeof why,
                "load: %s serves %s requests/s (mean %s in %s), but no move lowers that by %.0f%% without unbalancing "
                "tablet counts, and no single tablet carries the excess",
                hot.address.c_str(), Rate(hot.load).c_str(), Rate(mean).c_str(), dc.c_str(), o.min_load_gain * 100);
  d.reason = why;
  if (!hottest) d.kind = PlacementDecision::Kind::kNone;  // nothing of the tables it balances: no refusal to record
  return d;
}

}  // namespace tessera::cluster
