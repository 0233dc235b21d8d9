// DelayedCalls: runs a function once a delay has passed, on one thread of
// its own shared by every call (an asio io_context with steady timers).
// What a coordinator uses for the timers of requests that hold no thread:
// a read's speculative retry (cluster/replicated_tablet.h) fires from here
// instead of from a thread waiting on a condition variable.
//
// Contract: After(micros, fn) runs `fn` at most once, no earlier than
// `micros` microseconds from the call, on the DelayedCalls thread; a call
// pending when Stop() runs (or the object is destroyed) never runs, and its
// function is destroyed with the object. After() once stopped drops `fn`
// unrun. A function must not block: every timer waits behind it.
//
// Thread safety: After and Stop may be called from any thread, concurrently;
// Stop must not be called from the DelayedCalls thread itself.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace tessera::cluster {

class DelayedCalls {
 public:
  DelayedCalls();  // starts the thread
  ~DelayedCalls();
  DelayedCalls(const DelayedCalls&) = delete;
  DelayedCalls& operator=(const DelayedCalls&) = delete;

  void After(int64_t micros, std::function<void()> fn);
  // Cancels what is pending and joins the thread. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::cluster
