#include "cluster/hint_replayer.h"

#include <chrono>
#include <future>

#include <spdlog/spdlog.h>

#include "common/thread_name.h"
#include "common/uuid.h"

namespace tessera::cluster {

HintReplayer::HintReplayer(std::shared_ptr<HintStore> store, Membership* membership, InternodeTransport* client,
                           HintReplayOptions options)
    : store_(std::move(store)), membership_(membership), client_(client), options_(options) {}

HintReplayer::~HintReplayer() { Stop(); }

void HintReplayer::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] {
    SetCurrentThreadName("hint-replayer");
    Run();
  });
}

void HintReplayer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HintReplayer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    ReplayOnce();
    lock.lock();
    cv_.wait_for(lock, std::chrono::microseconds(options_.interval_micros), [this] { return stop_; });
  }
}

uint64_t HintReplayer::ReplayOnce() {
  uint64_t delivered = 0;
  for (const std::string& host : store_->Targets()) {
    auto member = membership_->Member(host);
    if (!member) {
      DropHintsOf(host);
      continue;
    }
    if (!member->alive || member->record.internode_port <= 0) continue;
    const std::string endpoint = member->record.address + ":" + std::to_string(member->record.internode_port);
    uint64_t before = delivered;
    if (!Deliver(host, endpoint, &delivered)) {
      spdlog::info("hints: delivery to {} ({}) paused after {} hints", endpoint, UuidText(host), delivered - before);
    } else if (delivered > before) {
      spdlog::info("hints: delivered {} hints to {} ({})", delivered - before, endpoint, UuidText(host));
    }
  }
  return delivered;
}

void HintReplayer::DropHintsOf(const std::string& host) {
  size_t dropped = 0;
  for (;;) {
    auto hints = store_->Oldest(host, options_.batch);
    if (!hints.ok() || hints->empty()) break;
    for (const Hint& hint : *hints) {
      if (!store_->Remove(host, hint, /*delivered=*/false).ok()) return;
      ++dropped;
    }
  }
  spdlog::info("hints: dropped {} hints for {}, no longer a member of the cluster", dropped, UuidText(host));
}

bool HintReplayer::Deliver(const std::string& host, const std::string& endpoint, uint64_t* delivered) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return true;
    }
    auto hints = store_->Oldest(host, options_.batch);
    if (!hints.ok()) {
      spdlog::warn("hints: cannot read the hints for {}: {}", endpoint, hints.status().ToString());
      return false;
    }
    if (hints->empty()) return true;
    for (const Hint& hint : *hints) {
      if (store_->Expired(hint) || (options_.wanted && !options_.wanted(host, hint.table_uuid, hint.writes))) {
        (void)store_->Remove(host, hint, /*delivered=*/false);
        continue;
      }
      std::promise<Status> sent;
      auto result = sent.get_future();
      client_->Apply(endpoint, hint.table_uuid, hint.writes, options_.send_timeout_micros, /*trace=*/nullptr,
                     [&sent](Status s) { sent.set_value(std::move(s)); });
      Status s = result.get();
      if (s.IsNotFound()) {
        // The table is gone on the replica (dropped since): nothing to deliver.
        (void)store_->Remove(host, hint, /*delivered=*/false);
        continue;
      }
      if (!s.ok()) return false;
      if (!store_->Remove(host, hint, /*delivered=*/true).ok()) return false;
      ++*delivered;
    }
  }
}

}  // namespace tessera::cluster
