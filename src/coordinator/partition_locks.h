// tessera::PartitionLocks — the coordinator's locks of single partitions,
// taken without holding a thread.
//
// What they are for: a write to a table with secondary indexes or views
// reads the rows it touches before and after its base write and writes the
// difference (coordinator/coordinator.h, "Derived rows"); two such writes of
// one partition coordinated by this node must take turns, or the second could
// read before the first wrote and both would leave the other's entries
// behind. On a cluster those reads and writes wait for other nodes, so the
// lock is held across replica round trips: a mutex would hold the request's
// thread all that time, which issue 28 item 1 forbids.
//
// Contract:
// - A lock is named by a key (KeyOf: table id and partition key, exact: two
//   partitions never share a lock). A request takes all its keys at once:
//   Acquire queues it on every key's queue in one step, and it is granted
//   when it heads every queue it is in. Since queueing is atomic and each
//   queue is first-in first-out, two requests never wait for each other
//   (no deadlock) and none is passed by a later request of the same keys.
// - Acquire never blocks. `granted` runs exactly once, with a Held that
//   releases the keys when destroyed (or Release()d):
//   - at once, on the calling thread, when every key is free;
//   - otherwise on the thread that releases the last key it waits for, or
//     on the thread already running granted continuations (one thread at a
//     time runs them, one after the other, each after the releasing
//     request's own). So a continuation must not block, and one that
//     finishes at once (and releases, granting further requests) has the
//     requests it grants run from the same loop, not nested in the stack.
// - Lock is the blocking form (a build's thread, a request on a waiting
//   thread): it returns once granted; the thread releasing before it only
//   wakes it.
// - Destroying PartitionLocks with a request waiting or a key held is a bug
//   (the coordinator is stopped after its requests drained).
//
// Thread safety: every method is thread-safe; a Held is used by one thread
// at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera {

class PartitionLocks {
 public:
  struct Waiter;  // a request queued or granted
  // Releases its keys when destroyed; empty (holds nothing) when moved from.
  class Held {
   public:
    Held() = default;
    Held(PartitionLocks* locks, Waiter* waiter) : locks_(locks), waiter_(waiter) {}
    Held(Held&& other) noexcept : locks_(other.locks_), waiter_(other.waiter_) { other.waiter_ = nullptr; }
    Held& operator=(Held&& other) noexcept;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() { Release(); }
    void Release();
    bool holds() const { return waiter_ != nullptr; }

   private:
    PartitionLocks* locks_ = nullptr;
    Waiter* waiter_ = nullptr;
  };
  using Granted = std::function<void(Held)>;

  PartitionLocks() = default;
  PartitionLocks(const PartitionLocks&) = delete;
  PartitionLocks& operator=(const PartitionLocks&) = delete;

  // The lock of one partition: the table id and the partition key's
  // components, each with its length (no two partitions share one).
  static std::string KeyOf(uint32_t table_id, const std::vector<std::string>& partition_key);

  // Grants `keys` (duplicates allowed; empty: granted at once) together to
  // `granted`, as the contract above says.
  void Acquire(std::vector<std::string> keys, Granted granted);
  // Blocks until `keys` are granted to this thread.
  Held Lock(std::vector<std::string> keys);

  // Keys held or waited for (for tests): 0 when every request released.
  size_t keys_in_use() const;
  // Requests queued and not granted yet (for tests).
  size_t waiting() const;

 private:
  void Release(Waiter* waiter);
  // Runs the continuations granted, and those granted while they run, unless
  // another thread is doing so already (it takes them over).
  void RunGranted(std::vector<Waiter*> granted);

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::deque<Waiter*>> queues_;  // mu_: the head holds the key
  std::vector<Waiter*> ready_;                                   // mu_: granted, continuation not run yet
  bool running_granted_ = false;                                 // mu_: some thread runs ready_
  size_t waiting_ = 0;                                           // mu_: queued, not granted
};

}  // namespace tessera
