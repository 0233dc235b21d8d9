// What replicated_tablet.cc, replicated_tablet_writes.cc and
// replicated_tablet_async_reads.cc share: a replica target, the steady clock
// the latency estimates count in, the answers gathered from replicas asked
// in parallel, and how key reads' answers are compared and reconciled.
// Internal to those files; not part of any other contract.
//
// Thread safety: Gathered is shared between the asking thread and the
// transport's callbacks (its members under `mu`).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/replicated_tablet.h"

namespace tessera::cluster {

struct ReplicatedTablet::Target {
  ReplicaTarget info;
  std::string endpoint;  // "address:port"; empty for this node
};

// Steady microseconds: what ReplicaLatency and the speculative threshold count in.
inline int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A replica as a trace names it (Cassandra's "/127.0.0.2"): its address
// without the port; "this node" for the local one.
inline std::string TracedPeer(const ReplicatedTablet::Target& target) {
  if (target.info.local || target.endpoint.empty()) return "this node";
  return "/" + EndpointAddress(target.endpoint);
}

// Records a step of a traced request (tracing/trace_session.h).
// REQUIRES: consistency.trace is set (callers test it first, so that an
// untraced request builds no text).
void TraceStep(const RequestConsistency& consistency, std::string activity);

// Answers gathered from replicas asked in parallel; shared with the gRPC
// callbacks, which may outlive the request that waited for them.
template <typename T>
struct Gathered {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<T>> answers;
  int answered = 0;
  int succeeded = 0;

  explicit Gathered(size_t n) : answers(n) {}
  void Record(size_t i, T answer, bool ok) {
    std::lock_guard<std::mutex> lock(mu);
    answers[i] = std::move(answer);
    ++answered;
    succeeded += ok;
    cv.notify_all();
  }
  // Waits until `enough` succeeded, all `sent` answered, or the deadline.
  void Wait(int enough, int sent, int64_t timeout_micros) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::microseconds(timeout_micros),
                [&] { return succeeded >= enough || answered >= sent; });
  }
};

// The value every replica should hold: the stored values (null: none
// there) folded by the merge operator; equal values stay as they are.
// REQUIRES: at least one non-null.
Result<std::string> Reconcile(const std::vector<const std::string*>& values);

// A replica's answer to a key read: the values of the keys (nullopt: none
// stored), or with `digest` their ValueDigests (cluster/replica_reads.h).
struct KeysAnswer {
  bool digest = false;
  std::vector<std::optional<std::string>> values;
};
// The data answer among `answers` when every answer holds `keys` values and
// every digest matches it; null when none is data or one disagrees.
const KeysAnswer* AgreedData(const std::vector<KeysAnswer>& answers, size_t keys);

// Reconciles a full key read's answers (one per replica asked, each in
// `keys` order): `out` gets each key's value, `repairs` (one per answer)
// what that replica lacks. Errors: those of Reconcile.
Status ReconcileKeyAnswers(const std::vector<std::string>& keys,
                           const std::vector<std::vector<std::optional<std::string>>>& answers,
                           std::vector<std::optional<std::string>>* out, std::vector<WriteSet>* repairs);

// Reconciles a range read's answers (one per replica asked, relative keys in
// the read's direction): the window of absolute keys every answer is
// complete for (up to the nearest last key of an answer its limit cut
// short), and in `repairs` (one per answer) what that replica lacks.
// Errors: those of Reconcile.
Result<KeyWindow> ReconcileRangeAnswers(uint32_t table_id, bool reverse, const std::vector<RangeBatch>& batches,
                                        std::vector<WriteSet>* repairs);

}  // namespace tessera::cluster
