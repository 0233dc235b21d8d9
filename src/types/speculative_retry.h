// The table option speculative_retry, as Cassandra 4 reads it
// (SpeculativeRetryPolicy): how long a coordinator's read waits for the
// replicas it asked before it also asks another (issue 28, item 2).
//
//   'NONE'                   never
//   'ALWAYS'                 at once: one more replica than the level needs
//   'Nms' (e.g. '10ms')      after N milliseconds (a decimal N allowed)
//   'Np' / 'NPERCENTILE'     after the table's N-th percentile of read
//                            latency on this coordinator (default '99p')
// Case-insensitive. Errors: InvalidArgument naming the value otherwise.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/latency_histogram.h"
#include "common/status.h"

namespace tessera {

struct SpeculativeRetry {
  enum class Kind { kNone, kAlways, kFixed, kPercentile };
  Kind kind = Kind::kPercentile;
  double value = 99;  // milliseconds (kFixed) or the percentile (kPercentile)
};

Result<SpeculativeRetry> ParseSpeculativeRetry(std::string_view text);

// Microseconds to wait before speculating; -1 for never. A percentile is the
// upper bound of the histogram bucket that reaches it, or `unknown_micros`
// while the table has fewer than 100 reads; the result is at most
// `timeout_micros`.
int64_t SpeculativeThresholdMicros(const SpeculativeRetry& policy, const LatencyHistogram& read_latency,
                                   int64_t unknown_micros, int64_t timeout_micros);

}  // namespace tessera
