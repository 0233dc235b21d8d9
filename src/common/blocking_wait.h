// tessera::WaitFor — what a blocking caller (housekeeping, an index or view
// build, a request on a waiting thread, the blocking forms of the
// coordinator's and the Paxos coordinator's calls) does with an asynchronous
// call that holds no thread: starts it and waits for its one answer.
//
// Contract: `start` is called once with a callback taking a T; WaitFor
// returns the T that callback is given (on any thread, exactly once).
// REQUIRES: the answer does not need this thread to come (it is not a
// continuation that only this thread would run).
#pragma once

#include <future>
#include <memory>

namespace tessera {

template <typename T, typename Start>
T WaitFor(Start&& start) {
  // Shared: the answering thread may still be in set_value as this one returns.
  auto answered = std::make_shared<std::promise<T>>();
  auto answer = answered->get_future();
  start([answered](T result) { answered->set_value(std::move(result)); });
  return answer.get();
}

}  // namespace tessera
