#include "types/speculative_retry.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace tessera {
namespace {

// A non-negative decimal number, all of `text`.
bool ParseNumber(const std::string& text, double* out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

Result<SpeculativeRetry> ParseSpeculativeRetry(std::string_view text) {
  std::string v;
  for (char c : text) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  SpeculativeRetry p;
  if (v == "none") {
    p.kind = SpeculativeRetry::Kind::kNone;
    return p;
  }
  if (v == "always") {
    p.kind = SpeculativeRetry::Kind::kAlways;
    return p;
  }
  auto strip = [&](std::string_view suffix) {
    if (v.size() <= suffix.size() || v.compare(v.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
    v.resize(v.size() - suffix.size());
    return true;
  };
  if (strip("ms") && ParseNumber(v, &p.value)) {
    p.kind = SpeculativeRetry::Kind::kFixed;
    return p;
  }
  if ((strip("percentile") || strip("p")) && ParseNumber(v, &p.value) && p.value > 0 && p.value < 100) {
    p.kind = SpeculativeRetry::Kind::kPercentile;
    return p;
  }
  return Status::InvalidArgument("Invalid value " + std::string(text) +
                                 " for option 'speculative_retry' (NONE, ALWAYS, <N>ms or <N>p)");
}

int64_t SpeculativeThresholdMicros(const SpeculativeRetry& policy, const LatencyHistogram& read_latency,
                                   int64_t unknown_micros, int64_t timeout_micros) {
  int64_t micros = unknown_micros;
  switch (policy.kind) {
    case SpeculativeRetry::Kind::kNone: return -1;
    case SpeculativeRetry::Kind::kAlways: return 0;
    case SpeculativeRetry::Kind::kFixed: micros = static_cast<int64_t>(policy.value * 1000); break;
    case SpeculativeRetry::Kind::kPercentile: {
      uint64_t total = 0;
      for (size_t i = 0; i <= LatencyHistogram::kBoundsMicros.size(); ++i) total += read_latency.Count(i);
      if (total < 100) break;
      const double wanted = policy.value / 100 * static_cast<double>(total);
      uint64_t seen = 0;
      micros = timeout_micros;  // beyond the last bound
      for (size_t i = 0; i < LatencyHistogram::kBoundsMicros.size(); ++i) {
        seen += read_latency.Count(i);
        if (static_cast<double>(seen) >= wanted) {
          micros = LatencyHistogram::kBoundsMicros[i];
          break;
        }
      }
      break;
    }
  }
  return std::min(micros, timeout_micros);
}

}  // namespace tessera
