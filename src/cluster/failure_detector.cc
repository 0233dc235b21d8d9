#include "cluster/failure_detector.h"

#include "common/steady_micros.h"

namespace tessera::cluster {

FailureDetector::FailureDetector(Membership* membership, InternodeTransport* client, FailureDetectorOptions options)
    : membership_(membership), client_(client), options_(options) {}

FailureDetector::~FailureDetector() { Stop(); }

void FailureDetector::Start() {
  task_.Start(options_.ping_interval_micros, [this] { Round(); });
}

void FailureDetector::Stop() {
  task_.Stop();
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return pings_in_flight_ == 0; });
}

void FailureDetector::Round() {
  const int64_t now = SteadyMicros();
  const std::string& self = membership_->self().host_id;
  std::vector<std::pair<std::string, std::string>> to_ping;  // host id, target
  std::vector<std::string> silent;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::string, Peer> seen;
    for (const auto& m : membership_->Members()) {
      const std::string& id = m.record.host_id;
      if (id == self || m.record.internode_port <= 0) continue;
      auto it = peers_.find(id);
      Peer peer = it != peers_.end() ? it->second : Peer{now, false};
      if (now - peer.last_heard_micros > options_.down_after_micros && m.alive) silent.push_back(id);
      if (!peer.ping_in_flight) {
        peer.ping_in_flight = true;
        ++pings_in_flight_;
        to_ping.emplace_back(id, m.record.address + ":" + std::to_string(m.record.internode_port));
      }
      seen[id] = peer;
    }
    // A ping in flight to a member gone since keeps its count until it calls back.
    peers_ = std::move(seen);
  }
  for (const auto& id : silent) membership_->SetReachable(id, false);
  for (const auto& [id, target] : to_ping) {
    client_->Ping(target, self, options_.down_after_micros, [this, id = id](Status s) { Answered(id, s.ok()); });
  }
}

void FailureDetector::Answered(const std::string& host_id, bool ok) {
  bool up = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = peers_.find(host_id);
    if (it != peers_.end()) {
      it->second.ping_in_flight = false;
      if (ok) it->second.last_heard_micros = SteadyMicros();
      up = ok;
    }
  }
  if (up) membership_->SetReachable(host_id, true);
  std::lock_guard<std::mutex> lock(mu_);
  if (--pings_in_flight_ == 0) idle_.notify_all();
}

}  // namespace tessera::cluster
