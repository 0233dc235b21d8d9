#include "cluster/reconciling_iterator.h"

namespace tessera::cluster {

ReconcilingIterator::ReconcilingIterator(std::string lower, std::string upper, Fetch fetch)
    : lower_(std::move(lower)), upper_(std::move(upper)), fetch_(std::move(fetch)) {}

void ReconcilingIterator::Load(WindowRequest request) {
  window_ = {};
  pos_ = 0;
  reverse_ = request.reverse;
  status_ = Status::OK();
  auto fetched = fetch_(request);
  if (!fetched.ok()) {
    status_ = fetched.status();
    return;
  }
  window_ = std::move(*fetched);
}

void ReconcilingIterator::Seek(std::string_view target) {
  if (!upper_.empty() && target >= upper_) {
    window_ = {};
    pos_ = 0;
    reverse_ = false;
    return;
  }
  Load({std::string(std::max(target, std::string_view(lower_))), true, false, false});
}

void ReconcilingIterator::SeekForPrev(std::string_view target) {
  if (target < lower_) {
    window_ = {};
    pos_ = 0;
    reverse_ = true;
    return;
  }
  if (!upper_.empty() && target >= upper_) return SeekToLast();
  Load({std::string(target), true, true, false});
}

void ReconcilingIterator::SeekToFirst() { Load({lower_, true, false, false}); }

void ReconcilingIterator::SeekToLast() { Load({std::string(), true, true, true}); }

bool ReconcilingIterator::Valid() const { return status_.ok() && pos_ < window_.entries.size(); }

void ReconcilingIterator::Next() {
  if (reverse_) {  // change of direction: everything after the current key
    Load({window_.entries[pos_].first, false, false, false});
    return;
  }
  if (++pos_ < window_.entries.size() || !window_.more) return;
  Load({window_.entries.back().first, false, false, false});
}

void ReconcilingIterator::Prev() {
  if (!reverse_) {
    Load({window_.entries[pos_].first, false, true, false});
    return;
  }
  if (++pos_ < window_.entries.size() || !window_.more) return;
  Load({window_.entries.back().first, false, true, false});
}

std::string_view ReconcilingIterator::key() const { return window_.entries[pos_].first; }
std::string_view ReconcilingIterator::value() const { return window_.entries[pos_].second; }

}  // namespace tessera::cluster
