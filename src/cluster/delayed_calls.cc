#include "cluster/delayed_calls.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/thread_name.h"

namespace tessera::cluster {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

struct DelayedCalls::Impl {
  using Pending = std::multimap<Clock::time_point, std::pair<uint64_t, std::function<void()>>>;

  std::mutex mu;
  std::condition_variable cv;
  Pending pending;                                          // by due time
  std::unordered_map<uint64_t, Pending::iterator> handles;  // what Cancel finds
  uint64_t next_handle = 1;
  // The time the thread sleeps until (max: until notified); After wakes it
  // only for a call due earlier.
  Clock::time_point sleeping_until = Clock::time_point::max();
  bool stopped = false;
  uint64_t wakeups = 0;
  std::thread thread;

  void Run() {
    std::unique_lock<std::mutex> lock(mu);
    std::vector<std::function<void()>> due;
    while (!stopped) {
      const Clock::time_point now = Clock::now();
      while (!pending.empty() && pending.begin()->first <= now) {
        auto node = pending.extract(pending.begin());
        handles.erase(node.mapped().first);
        due.push_back(std::move(node.mapped().second));
      }
      if (!due.empty()) {
        lock.unlock();
        for (auto& fn : due) fn();
        due.clear();
        lock.lock();
        continue;
      }
      sleeping_until = pending.empty() ? Clock::time_point::max() : pending.begin()->first;
      if (pending.empty()) {
        cv.wait(lock);
      } else {
        cv.wait_until(lock, sleeping_until);
      }
      sleeping_until = Clock::time_point::min();  // awake: After need not notify
      ++wakeups;
    }
  }
};

DelayedCalls::DelayedCalls() : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread([impl = impl_.get()] {
    SetCurrentThreadName("delayed-calls");
    impl->Run();
  });
}

DelayedCalls::~DelayedCalls() { Stop(); }

uint64_t DelayedCalls::After(int64_t micros, std::function<void()> fn) {
  const Clock::time_point at = Clock::now() + std::chrono::microseconds(micros > 0 ? micros : 0);
  bool wake = false;
  uint64_t handle = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopped) return 0;
    handle = impl_->next_handle++;
    auto it = impl_->pending.emplace(at, std::make_pair(handle, std::move(fn)));
    impl_->handles.emplace(handle, it);
    wake = at < impl_->sleeping_until;
    if (wake) impl_->sleeping_until = at;  // one notification for a burst of earlier calls
  }
  if (wake) impl_->cv.notify_one();
  return handle;
}

bool DelayedCalls::Cancel(uint64_t handle) {
  std::function<void()> dropped;  // destroyed outside the lock: it may own anything
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto h = impl_->handles.find(handle);
    if (h == impl_->handles.end()) return false;
    dropped = std::move(h->second->second.second);
    impl_->pending.erase(h->second);
    impl_->handles.erase(h);
  }
  return true;
}

void DelayedCalls::Stop() {
  Impl::Pending dropped;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
    dropped.swap(impl_->pending);
    impl_->handles.clear();
  }
  impl_->cv.notify_one();
  if (impl_->thread.joinable() && impl_->thread.get_id() != std::this_thread::get_id()) impl_->thread.join();
}

uint64_t DelayedCalls::wakeups() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->wakeups;
}

}  // namespace tessera::cluster
