// ReconcilingIterator: a KvIterator over a key range whose entries come in
// windows from a fetch function (cluster/replicated_tablet.cc: several
// replicas read in parallel, reconciled and repaired), so a read of a large
// range holds one window at a time, in either direction, and paging readers
// see an ordinary storage iterator.
//
// A window is complete for its stretch of keys: every key between the
// position it was fetched from and its last entry (or the range's end, when
// `more` is false) is in it. Moving past the last entry fetches the next
// window from just after it; a change of direction fetches from the current
// key. A forward Seek to a key the current forward window covers moves
// within it and fetches nothing (a split's median, jumping from partition to
// partition through a remote replica, once fetched a window per partition).
//
// Errors: a failed fetch makes the iterator invalid with that status
// (ReadTimeout, Unavailable, IOError); readers check status() after a step.
//
// Thread safety: not thread-safe (as every KvIterator).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "storage/storage_engine.h"
#include "tablets/replica.h"

namespace tessera::cluster {

using tessera::KeyWindow;  // tablets/replica.h: absolute keys, in the fetch's direction

struct WindowRequest {
  std::string from;          // absolute key
  bool inclusive = true;
  bool reverse = false;
  bool from_end = false;     // reverse from the range's upper end (`from` ignored)
};

class ReconcilingIterator : public KvIterator {
 public:
  using Fetch = std::function<Result<KeyWindow>(const WindowRequest&)>;
  // Iterates [lower, upper) (empty upper: unbounded); `fetch` is asked only
  // for positions inside it.
  ReconcilingIterator(std::string lower, std::string upper, Fetch fetch);

  void Seek(std::string_view target) override;
  void SeekForPrev(std::string_view target) override;
  void SeekToFirst() override;
  void SeekToLast() override;
  bool Valid() const override;
  void Next() override;
  void Prev() override;
  std::string_view key() const override;
  std::string_view value() const override;
  Status status() const override { return status_; }

 private:
  void Load(WindowRequest request);
  // Whether a forward window's stretch covers `target` (see the header comment).
  bool Covers(std::string_view target) const;
  std::string lower_, upper_;
  Fetch fetch_;
  KeyWindow window_;
  std::optional<WindowRequest> fetched_from_;  // what window_ answers (none: no window)
  size_t pos_ = 0;
  bool reverse_ = false;
  Status status_;
};

}  // namespace tessera::cluster
