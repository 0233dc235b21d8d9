#include "cluster/placement_plan.h"

#include <algorithm>
#include <cstdio>
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

struct Candidate {
  size_t tablet = 0;
  double peak = 0;  // the higher of the two nodes' loads after the move
  double load = 0;
};

// The tablet on `from` but not on `to` whose move leaves the higher of the
// two nodes' loads lowest (ties: the colder tablet).
std::optional<Candidate> BestMove(const std::vector<TabletPlacementLoad>& tablets, const NodePlacementLoad& from,
                                  const NodePlacementLoad& to) {
  std::optional<Candidate> best;
  for (size_t i = 0; i < tablets.size(); ++i) {
    const auto& t = tablets[i];
    if (!Holds(t, from.host_id) || Holds(t, to.host_id)) continue;
    const double peak = std::max(from.load - t.load, to.load + t.load);
    if (!best || peak < best->peak || (peak == best->peak && t.load < best->load)) best = Candidate{i, peak, t.load};
  }
  return best;
}

std::string Rate(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

PlacementDecision CountMove(const std::string& dc, const std::vector<NodePlacementLoad>& nodes,
                            const std::vector<TabletPlacementLoad>& tablets) {
  // Fullest (the busiest among them) and emptiest (the least busy among them).
  const NodePlacementLoad* max = &nodes.front();
  const NodePlacementLoad* min = &nodes.front();
  for (const auto& n : nodes) {
    if (n.tablets > max->tablets || (n.tablets == max->tablets && n.load > max->load)) max = &n;
    if (n.tablets < min->tablets || (n.tablets == min->tablets && n.load < min->load)) min = &n;
  }
  auto move = BestMove(tablets, *max, *min);
  if (!move) return {};
  PlacementDecision d;
  d.kind = PlacementDecision::Kind::kMove;
  d.tablet = move->tablet;
  d.from = max->host_id;
  d.to = min->host_id;
  char why[320];
  std::snprintf(why, sizeof why,
                "balance: %s holds %d tablet replicas, %s %d (mean %.1f in %s); this replica serves %s requests/s "
                "(the nodes serve %s and %s)",
                max->address.c_str(), max->tablets, min->address.c_str(), min->tablets, MeanCount(nodes), dc.c_str(),
                Rate(move->load).c_str(), Rate(max->load).c_str(), Rate(min->load).c_str());
  d.reason = why;
  return d;
}

}  // namespace

void NodeLoads(const std::vector<TabletPlacementLoad>& tablets, std::vector<NodePlacementLoad>* nodes) {
  std::map<std::string, NodePlacementLoad*> by_host;
  for (auto& n : *nodes) {
    n.load = 0;
    by_host[n.host_id] = &n;
  }
  for (const auto& t : tablets) {
    for (const auto& r : t.replicas) {
      if (auto n = by_host.find(r); n != by_host.end()) n->second->load += t.load;
    }
  }
}

PlacementDecision PlanPlacement(const std::string& dc, const std::vector<NodePlacementLoad>& nodes,
                                const std::vector<TabletPlacementLoad>& tablets, const PlacementPlanOptions& o,
                                bool loads_current) {
  if (nodes.size() < 2) return {};
  if (CountsUnbalanced(nodes, o)) {
    PlacementDecision d = CountMove(dc, nodes, tablets);
    if (d.kind != PlacementDecision::Kind::kNone) return d;
  }
  if (!loads_current) return {};
  const double mean = MeanLoad(nodes);
  size_t busiest = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (nodes[i].load > nodes[busiest].load) busiest = i;
  }
  const NodePlacementLoad& hot = nodes[busiest];
  if (hot.load <= o.load_max_over_mean * mean || hot.load - mean < o.min_load_per_second) return {};

  // Rule 2: the best move off the busiest node that rule 1 would not undo.
  std::optional<Candidate> best;
  size_t best_to = 0;
  for (size_t j = 0; j < nodes.size(); ++j) {
    if (j == busiest) continue;
    auto move = BestMove(tablets, hot, nodes[j]);
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
                  Rate(nodes[best_to].load).c_str(), Rate(mean).c_str(), dc.c_str(), Rate(best->load).c_str(),
                  Rate(best->peak).c_str());
    d.reason = why;
    return d;
  }

  // Rule 3: the hottest tablet on the busiest node, if it alone is the excess.
  std::optional<size_t> hottest;
  for (size_t i = 0; i < tablets.size(); ++i) {
    if (Holds(tablets[i], hot.host_id) && (!hottest || tablets[i].load > tablets[*hottest].load)) hottest = i;
  }
  PlacementDecision d;
  d.from = hot.host_id;
  if (hottest && tablets[*hottest].load > hot.load - mean) {
    d.kind = PlacementDecision::Kind::kSplit;
    d.tablet = *hottest;
    std::snprintf(why, sizeof why,
                  "load: %s serves %s requests/s (mean %s in %s) and no move lowers that; its hottest tablet serves "
                  "%s of them, more than the excess: split it so that its halves can be placed apart",
                  hot.address.c_str(), Rate(hot.load).c_str(), Rate(mean).c_str(), dc.c_str(),
                  Rate(tablets[*hottest].load).c_str());
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
