// A background thread that runs a function every interval until stopped:
// the explicit stop every background task of a node needs (Stop wakes the
// wait at once and joins; a run in progress finishes first).
//
// Thread safety: Start and Stop from one thread (the owner's); `run` runs
// on the task's thread only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera {

class PeriodicTask {
 public:
  PeriodicTask() = default;
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;
  ~PeriodicTask() { Stop(); }

  // Runs `run` now and then every `interval_micros` after each run ends.
  // REQUIRES: not running.
  void Start(int64_t interval_micros, std::function<void()> run) {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = false;
    thread_ = std::thread([this, interval_micros, run = std::move(run)] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!stopping_) {
        lock.unlock();
        run();
        lock.lock();
        wake_.wait_for(lock, std::chrono::microseconds(interval_micros), [this] { return stopping_; });
      }
    });
  }

  // No-op when not running.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace tessera
