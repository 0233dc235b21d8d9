#include "cluster/replica_latency.h"

#include <algorithm>

namespace tessera::cluster {

void ReplicaLatency::Sent(const std::string& host) {
  std::lock_guard<std::mutex> lock(mu_);
  ++peers_[host].in_flight;
}

void ReplicaLatency::Answered(const std::string& host, int64_t micros, bool ok, int64_t now_micros) {
  std::lock_guard<std::mutex> lock(mu_);
  Peer& p = peers_[host];
  p.in_flight = std::max(0, p.in_flight - 1);
  if (!ok) {
    p.slow_until_micros = now_micros + kSlowMicros;
    return;
  }
  const double m = static_cast<double>(std::max<int64_t>(micros, 1));
  p.average_micros = p.average_micros == 0 ? m : p.average_micros + (m - p.average_micros) / 8;
  // An answer in time clears a mark that a speculative threshold left.
  p.slow_until_micros = 0;
}

void ReplicaLatency::Missed(const std::string& host, int64_t now_micros) {
  std::lock_guard<std::mutex> lock(mu_);
  peers_[host].slow_until_micros = now_micros + kSlowMicros;
}

double ReplicaLatency::ScoreLocked(const Peer* peer, int64_t now_micros) const {
  double average = peer != nullptr ? peer->average_micros : 0;
  if (average == 0) {  // never answered: the mean of the others
    double sum = 0;
    int n = 0;
    for (const auto& [host, p] : peers_) {
      if (p.average_micros > 0) {
        sum += p.average_micros;
        ++n;
      }
    }
    average = n > 0 ? sum / n : 0;
  }
  double score = average * (1 + (peer != nullptr ? peer->in_flight : 0));
  if (peer != nullptr && peer->slow_until_micros > now_micros) score += 1e12;  // after every peer that is not slow
  return score;
}

double ReplicaLatency::Score(const std::string& host, int64_t now_micros) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = peers_.find(host);
  return ScoreLocked(it == peers_.end() ? nullptr : &it->second, now_micros);
}

std::vector<std::string> ReplicaLatency::Order(std::vector<std::string> hosts, int64_t now_micros) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<double, size_t>> scored;
  for (size_t i = 0; i < hosts.size(); ++i) {
    auto it = peers_.find(hosts[i]);
    scored.emplace_back(ScoreLocked(it == peers_.end() ? nullptr : &it->second, now_micros), i);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [score, i] : scored) out.push_back(std::move(hosts[i]));
  return out;
}

int64_t ReplicaLatency::AverageMicros(const std::string& host) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = peers_.find(host);
  return it == peers_.end() ? 0 : static_cast<int64_t>(it->second.average_micros);
}

}  // namespace tessera::cluster
