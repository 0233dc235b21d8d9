#include "db/window_chain.h"

namespace tessera {

void ChainWindows(const std::shared_ptr<WindowRelay>& relay, const AskWindow& ask, const TakeWindow& take) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(relay->mu);
      relay->asking = true;
    }
    ask([relay, ask, take](Result<KeyWindow> window) {
      {
        std::lock_guard<std::mutex> lock(relay->mu);
        if (relay->asking) {  // inline: the loop below takes it
          relay->stash = std::move(window);
          return;
        }
      }
      if (take(std::move(window))) ChainWindows(relay, ask, take);
    });
    std::optional<Result<KeyWindow>> arrived;
    {
      std::lock_guard<std::mutex> lock(relay->mu);
      relay->asking = false;
      arrived.swap(relay->stash);
    }
    if (!arrived || !take(std::move(*arrived))) return;
  }
}

}  // namespace tessera
