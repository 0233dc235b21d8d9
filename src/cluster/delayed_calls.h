// DelayedCalls: runs a function once a delay has passed, on one thread of
// its own shared by every call. What a coordinator uses for the timers of
// requests that hold no thread: a read's speculative retry
// (cluster/replicated_tablet.h) fires from here instead of from a thread
// waiting on a condition variable.
//
// Why not one asio timer per call: a read arms a timer and, far more often
// than not, finishes before it fires. A timer made on the timer thread woke
// that thread twice per read (to make it, then to fire it into a read long
// finished): two futex wake-ups per read on a 2-core machine. Here After
// wakes the thread only when its call is due before everything pending,
// and Cancel takes a call out without waking it, so under a steady load the
// thread wakes about once per retry interval, not twice per read.
//
// Contract: After(micros, fn) runs `fn` at most once, no earlier than
// `micros` microseconds from the call, on the DelayedCalls thread, unless
// Cancel(handle) came first; a call pending when Stop() runs (or the object
// is destroyed) never runs, and its function is destroyed unrun. After()
// once stopped drops `fn` unrun and returns 0. A function must not block:
// every call due after it waits behind it.
//
// Thread safety: After, Cancel and Stop may be called from any thread,
// concurrently; Stop must not be called from the DelayedCalls thread itself.
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

  // Returns the call's handle for Cancel (never 0 for a call taken).
  uint64_t After(int64_t micros, std::function<void()> fn);
  // Takes a pending call out (its function is destroyed here, unrun).
  // Returns whether it was pending: false for a call that ran, is running,
  // was cancelled before, or handle 0.
  bool Cancel(uint64_t handle);
  // Cancels what is pending and joins the thread. Idempotent.
  void Stop();
  // Times the thread woke (a due call, an earlier call arriving, Stop): for tests.
  uint64_t wakeups() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::cluster
