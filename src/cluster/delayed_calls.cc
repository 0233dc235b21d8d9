#include "cluster/delayed_calls.h"

#include <algorithm>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

namespace tessera::cluster {

struct DelayedCalls::Impl {
  asio::io_context io{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{io.get_executor()};
  std::thread thread;
  std::mutex stop_mu;
  std::atomic<bool> stopped{false};
};

DelayedCalls::DelayedCalls() : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

DelayedCalls::~DelayedCalls() { Stop(); }

void DelayedCalls::After(int64_t micros, std::function<void()> fn) {
  if (impl_->stopped.load()) return;
  // The timer is made on the io thread: asio timers are not thread-safe
  // objects, and the handler owns it until it fires or is dropped.
  asio::post(impl_->io, [io = &impl_->io, micros, fn = std::move(fn)]() mutable {
    auto timer = std::make_shared<asio::steady_timer>(*io, std::chrono::microseconds(std::max<int64_t>(micros, 0)));
    timer->async_wait([timer, fn = std::move(fn)](const std::error_code& ec) {
      if (!ec) fn();
    });
  });
}

void DelayedCalls::Stop() {
  std::lock_guard<std::mutex> lock(impl_->stop_mu);
  if (impl_->stopped.exchange(true)) return;
  impl_->work.reset();
  impl_->io.stop();  // pending timers' handlers are destroyed unrun with the io_context
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace tessera::cluster
