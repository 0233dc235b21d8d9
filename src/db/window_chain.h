// ChainWindows: a read of many windows (Replica::ReadWindowAsync) as a chain
// of callbacks that holds no thread (issue 28 item 1), shared by the
// asynchronous slice and range reads (db/slice_read_async.cc,
// db/range_read_async.cc). Each next window is asked from the thread the
// last one arrived on; a window answered inline, on the asking thread (a
// local replica), is taken by a loop instead, so a long read of a local
// replica does not recurse.
//
// Thread safety: one chain per WindowRelay; `ask` and `take` run on one
// thread at a time (the chain's), never concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "common/status.h"
#include "tablets/replica.h"

namespace tessera {

// The keys a read's windows ask for: the first window is small, so that a
// short slice or page moves a few keys, and each next one 4 times the last
// up to the largest (as a replicated tablet's iterator, ReplicationServices).
constexpr uint32_t kFirstWindowKeys = 32;
constexpr uint32_t kMaxWindowKeys = 512;

// What a chain keeps between an ask and its answer.
struct WindowRelay {
  std::mutex mu;
  bool asking = false;                       // an ask is on the stack: its answer is stashed
  std::optional<Result<KeyWindow>> stash;    // an answer that came inline
};

// Asks for one window, answering through `answer` exactly once.
using AskWindow = std::function<void(Replica::WindowDone answer)>;
// Takes one window; true when another window is needed.
using TakeWindow = std::function<bool(Result<KeyWindow>)>;

// Asks and takes windows until `take` returns false.
void ChainWindows(const std::shared_ptr<WindowRelay>& relay, const AskWindow& ask, const TakeWindow& take);

}  // namespace tessera
