#include "tracing/trace_store.h"

#include <random>

#include "common/time_uuid.h"

namespace tessera::tracing {
namespace {

uint64_t RandomBits() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

}  // namespace

TraceStore::TraceStore(std::string coordinator) : coordinator_(std::move(coordinator)) {}

Status TraceStore::set_probability(double p) {
  if (!(p >= 0.0 && p <= 1.0)) return Status::InvalidArgument("trace probability must be between 0 and 1");
  probability_.store(p, std::memory_order_relaxed);
  return Status::OK();
}

bool TraceStore::ShouldTrace(bool requested) const {
  if (requested) return true;
  const double p = probability();
  // 53 random bits as a double in [0, 1).
  return p > 0.0 && static_cast<double>(RandomBits() >> 11) * 0x1.0p-53 < p;
}

std::shared_ptr<TraceSession> TraceStore::Begin(std::string client, std::string request,
                                                std::map<std::string, std::string> parameters) {
  const int64_t now = UnixMicros();
  TraceSessionRecord r;
  r.session_id = NewTimeUuid(now);
  r.client = std::move(client);
  r.command = "QUERY";
  r.coordinator = coordinator_;
  r.request = std::move(request);
  r.parameters = std::move(parameters);
  r.started_at_millis = now / 1000;
  auto session = std::make_shared<TraceSession>(std::move(r));
  std::lock_guard<std::mutex> lock(mu_);
  HoldLocked(now, session);
  return session;
}

void TraceStore::HoldLocked(int64_t began_micros, std::shared_ptr<TraceSession> session) {
  DropExpiredLocked(UnixMicros());
  if (sessions_.size() >= kMaxSessions) sessions_.pop_front();
  sessions_.push_back({began_micros, std::move(session)});
}

void TraceStore::Finish(const std::shared_ptr<TraceSession>& session) {
  session->Finish();
  std::lock_guard<std::mutex> lock(hook_mu_);
  if (on_finish_) on_finish_(session->Snapshot());
}

void TraceStore::set_on_finish(std::function<void(const TraceSessionRecord&)> hook) {
  std::lock_guard<std::mutex> lock(hook_mu_);
  on_finish_ = std::move(hook);
}

void TraceStore::Add(TraceSessionRecord record) {
  if (record.session_id.size() != 16) return;
  const int64_t began = record.started_at_millis * 1000;
  auto session = std::make_shared<TraceSession>(std::move(record));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->session->session_id() == session->session_id()) {
      sessions_.erase(it);
      break;
    }
  }
  HoldLocked(began, std::move(session));
}

void TraceStore::DropExpiredLocked(int64_t now_micros) {
  while (!sessions_.empty() && now_micros - sessions_.front().began_micros > kRetentionMicros) sessions_.pop_front();
}

std::vector<TraceSessionRecord> TraceStore::Sessions() const {
  std::vector<std::shared_ptr<TraceSession>> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now = UnixMicros();
    for (const auto& h : sessions_) {
      if (now - h.began_micros <= kRetentionMicros) held.push_back(h.session);
    }
  }
  std::vector<TraceSessionRecord> out;
  out.reserve(held.size());
  for (const auto& s : held) out.push_back(s->Snapshot());
  return out;
}

std::optional<TraceSessionRecord> TraceStore::Find(const std::string& session_id) const {
  std::shared_ptr<TraceSession> found;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& h : sessions_) {
      if (h.session->session_id() == session_id) found = h.session;
    }
  }
  if (!found) return std::nullopt;
  return found->Snapshot();
}

}  // namespace tessera::tracing
