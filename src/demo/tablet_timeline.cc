#include "demo/tablet_timeline.h"

#include <algorithm>

namespace tessera::demo {

void TabletTimeline::Sample(double seconds) {
  TimelineSample s;
  s.seconds = seconds;
  std::map<TabletId, uint64_t> now;
  for (const auto& t : db_->Tablets(*table_)) {
    auto prev = last_writes_.find(t.id);
    const uint64_t before = prev == last_writes_.end() ? 0 : prev->second;
    s.tablets.push_back({t.id, t.writes, t.writes >= before ? t.writes - before : 0});
    now[t.id] = t.writes;
  }
  last_writes_ = std::move(now);
  samples_.push_back(std::move(s));
}

WriteDistribution TabletTimeline::Distribution(double from_seconds) const {
  WriteDistribution d;
  double last = 0, busiest = 0;
  for (size_t i = 1; i < samples_.size(); ++i) {  // the first sample has no interval before it
    const auto& s = samples_[i];
    if (s.seconds <= from_seconds) continue;
    uint64_t total = 0, max = 0;
    for (const auto& t : s.tablets) {
      total += t.interval_writes;
      max = std::max(max, t.interval_writes);
    }
    d.max_tablets = std::max(d.max_tablets, s.tablets.size());
    if (total == 0) continue;
    d.writes += total;
    last += static_cast<double>(s.tablets.back().interval_writes);
    busiest += static_cast<double>(max);
  }
  if (d.writes > 0) {
    d.last_tablet_share = last / static_cast<double>(d.writes);
    d.busiest_tablet_share = busiest / static_cast<double>(d.writes);
  }
  return d;
}

}  // namespace tessera::demo
