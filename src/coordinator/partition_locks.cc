// PartitionLocks (coordinator/partition_locks.h): per-key first-in first-out
// queues under one mutex; a request is granted when it heads all of its.
#include "coordinator/partition_locks.h"

#include <algorithm>
#include <cassert>
#include <future>
#include <utility>

#include "common/bytes.h"

namespace tessera {

struct PartitionLocks::Waiter {
  std::vector<std::string> keys;  // distinct
  size_t heads = 0;               // queues this request heads
  bool blocking = false;          // Lock's: `granted` only wakes its thread
  Granted granted;
};

PartitionLocks::Held& PartitionLocks::Held::operator=(Held&& other) noexcept {
  if (this != &other) {
    Release();
    locks_ = other.locks_;
    waiter_ = std::exchange(other.waiter_, nullptr);
  }
  return *this;
}

void PartitionLocks::Held::Release() {
  if (Waiter* w = std::exchange(waiter_, nullptr)) locks_->Release(w);
}

std::string PartitionLocks::KeyOf(uint32_t table_id, const std::vector<std::string>& partition_key) {
  std::string key;
  PutBigEndian32(&key, table_id);
  for (const std::string& component : partition_key) {
    PutBigEndian32(&key, static_cast<uint32_t>(component.size()));
    key += component;
  }
  return key;
}

void PartitionLocks::Acquire(std::vector<std::string> keys, Granted granted) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  auto* w = new Waiter{std::move(keys), 0, false, std::move(granted)};
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& key : w->keys) {
      auto& queue = queues_[key];
      queue.push_back(w);
      if (queue.size() == 1) ++w->heads;
    }
    if (w->heads != w->keys.size()) {
      ++waiting_;
      return;  // granted by the release of the last key it waits for
    }
  }
  Granted run = std::move(w->granted);
  run(Held(this, w));
}

PartitionLocks::Held PartitionLocks::Lock(std::vector<std::string> keys) {
  // Shared: the releasing thread may still be in set_value as this one returns.
  auto granted = std::make_shared<std::promise<Held>>();
  auto held = granted->get_future();
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  auto* w = new Waiter{std::move(keys), 0, true, [granted](Held h) { granted->set_value(std::move(h)); }};
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& key : w->keys) {
      auto& queue = queues_[key];
      queue.push_back(w);
      if (queue.size() == 1) ++w->heads;
    }
    if (w->heads == w->keys.size()) return Held(this, w);
    ++waiting_;
  }
  return held.get();
}

void PartitionLocks::Release(Waiter* waiter) {
  std::vector<Waiter*> granted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& key : waiter->keys) {
      auto it = queues_.find(key);
      assert(it != queues_.end() && it->second.front() == waiter);
      it->second.pop_front();
      if (it->second.empty()) {
        queues_.erase(it);
        continue;
      }
      Waiter* next = it->second.front();
      if (++next->heads == next->keys.size()) granted.push_back(next);
    }
    waiting_ -= granted.size();
  }
  delete waiter;
  // A blocking waiter is only woken: its own thread goes on.
  auto blocking = std::partition(granted.begin(), granted.end(), [](Waiter* w) { return w->blocking; });
  for (auto it = granted.begin(); it != blocking; ++it) {
    Granted wake = std::move((*it)->granted);
    wake(Held(this, *it));
  }
  granted.erase(granted.begin(), blocking);
  if (!granted.empty()) RunGranted(std::move(granted));
}

void PartitionLocks::RunGranted(std::vector<Waiter*> granted) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_.insert(ready_.end(), granted.begin(), granted.end());
    if (running_granted_) return;  // that thread runs them
    running_granted_ = true;
  }
  for (;;) {
    std::vector<Waiter*> run;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ready_.empty()) {
        running_granted_ = false;
        return;
      }
      run.swap(ready_);
    }
    for (Waiter* w : run) {
      Granted continuation = std::move(w->granted);
      continuation(Held(this, w));
    }
  }
}

size_t PartitionLocks::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

size_t PartitionLocks::keys_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queues_.size();
}

}  // namespace tessera
