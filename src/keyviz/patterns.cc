#include "keyviz/patterns.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

namespace tessera::keyviz {
namespace {

// A key range [start, end); an empty end is the table's end.
struct Range {
  std::string start, end;
  bool Overlaps(const Range& o) const {
    const bool starts_before_o_ends = o.end.empty() || start < o.end;
    const bool o_starts_before_end = end.empty() || o.start < end;
    return starts_before_o_ends && o_starts_before_end;
  }
};

std::string Percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100);
  return buf;
}

double Value(const KeyVizRow& r, Metric m) { return m == Metric::kWrites ? r.writes : r.reads; }

}  // namespace

const char* MetricName(Metric m) { return m == Metric::kWrites ? "writes" : "reads"; }

Pattern ClassifyTable(const KeyVizHistory& history, uint32_t table_id, Metric metric, const PatternHints& hints) {
  Pattern p;
  p.metric = metric;
  const std::string what = MetricName(metric);
  double multi_ops = 0, last_ops = 0, hottest_ops = 0, fair_share_sum = 0;
  size_t multi_columns = 0, stable_pairs = 0, pairs = 0;
  std::optional<Range> previous_hot;
  for (size_t c = 0; c < history.size(); ++c) {
    const KeyVizColumn& col = history.column(c);
    const double seconds = static_cast<double>(col.end_micros - col.start_micros) / 1e6;
    std::vector<const KeyVizRow*> rows;
    for (const auto& r : col.rows) {
      if (r.table_id == table_id) rows.push_back(&r);
    }
    if (rows.empty()) continue;
    p.max_rows = std::max(p.max_rows, rows.size());
    double ops = 0, hottest = -1;
    size_t hot = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const double v = Value(*rows[i], metric) * seconds;
      ops += v;
      if (v > hottest) hottest = v, hot = i;
    }
    if (ops < 1) {
      previous_hot.reset();
      continue;
    }
    ++p.columns;
    p.operations += ops;
    if (rows.size() < 2) {
      previous_hot.reset();
      continue;
    }
    ++multi_columns;
    multi_ops += ops;
    last_ops += Value(*rows.back(), metric) * seconds;
    hottest_ops += hottest;
    fair_share_sum += ops / static_cast<double>(rows.size());
    Range range{std::string(rows[hot]->Key()), hot + 1 < rows.size() ? std::string(rows[hot + 1]->Key()) : ""};
    if (previous_hot) {
      ++pairs;
      stable_pairs += range.Overlaps(*previous_hot);
    }
    previous_hot = std::move(range);
  }
  char buf[512];
  auto name = [&](const char* kind, const char* shape, double share) {
    p.kind = kind;
    p.shape = shape;
    p.share = share;
  };
  if (p.operations < kMinOperations || multi_columns == 0) {
    const bool idle = p.operations < kMinOperations;
    name(idle ? "idle" : "single_tablet", idle ? "none" : "one row", 0);
    std::snprintf(buf, sizeof buf, "%.0f %s in %zu columns%s", p.operations, what.c_str(), p.columns,
                  idle ? ": too few to name a pattern." : ", all on the table's only tablet.");
    p.evidence = buf;
    return p;
  }
  const double tail = last_ops / multi_ops;
  const double band = hottest_ops / multi_ops;
  const double fair = fair_share_sum / multi_ops;
  const double stability = pairs ? static_cast<double>(stable_pairs) / static_cast<double>(pairs) : 1.0;
  const bool one_partition = hints.hot_partition_share >= 0.5;
  if (hints.range_table && tail >= kTailShare && !one_partition) {
    name("monotonic_tail", "diagonal", tail);
    std::snprintf(buf, sizeof buf,
                  "The last tablet (the greatest keys) took %s of %.0f %s over %zu columns with up to %zu tablets: "
                  "every insert lands at the end of the key space, and each split only moves the hot cell to the "
                  "new last tablet.",
                  Percent(tail).c_str(), multi_ops, what.c_str(), multi_columns, p.max_rows);
  } else if (band >= kBandShare && band >= 3 * fair && (stability >= 0.6 || one_partition)) {
    name("hot_band", "horizontal band", band);
    std::snprintf(buf, sizeof buf,
                  "One key range took %s of %.0f %s (a fair share is %s) and was the hottest in %s of consecutive "
                  "columns%s.",
                  Percent(band).c_str(), multi_ops, what.c_str(), Percent(fair).c_str(), Percent(stability).c_str(),
                  one_partition ? ("; one partition holds " + Percent(hints.hot_partition_share) + " of them").c_str()
                                : "");
  } else if (band >= kBandShare && band >= 3 * fair) {
    name("moving_hotspot", "moving spot", band);
    std::snprintf(buf, sizeof buf,
                  "In each column one key range took most of the %s (%s on average), but it was the same range in "
                  "only %s of consecutive columns: the load walks through the key space.",
                  what.c_str(), Percent(band).c_str(), Percent(stability).c_str());
  } else {
    name("even", "even", band);
    std::snprintf(buf, sizeof buf,
                  "%.0f %s spread over up to %zu tablets: the busiest took %s per column on average (a fair share "
                  "is %s) and the last %s.",
                  multi_ops, what.c_str(), p.max_rows, Percent(band).c_str(), Percent(fair).c_str(),
                  Percent(tail).c_str());
  }
  p.evidence = buf;
  return p;
}

}  // namespace tessera::keyviz
