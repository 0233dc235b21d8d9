#include "cluster/reconciling_iterator.h"

#include <algorithm>

namespace tessera::cluster {

ReconcilingIterator::ReconcilingIterator(std::string lower, std::string upper, Fetch fetch)
    : lower_(std::move(lower)), upper_(std::move(upper)), fetch_(std::move(fetch)) {}

void ReconcilingIterator::Load(WindowRequest request) {
  window_ = {};
  pos_ = 0;
  reverse_ = request.reverse;
  status_ = Status::OK();
  fetched_from_.reset();
  auto fetched = fetch_(request);
  if (!fetched.ok()) {
    status_ = fetched.status();
    return;
  }
  window_ = std::move(*fetched);
  fetched_from_ = std::move(request);
}

void ReconcilingIterator::Seek(std::string_view target) {
  if (!upper_.empty() && target >= upper_) {
    window_ = {};
    fetched_from_.reset();
    pos_ = 0;
    reverse_ = false;
    return;
  }
  const std::string_view from = std::max(target, std::string_view(lower_));
  if (Covers(from)) {
    auto at = std::lower_bound(window_.entries.begin(), window_.entries.end(), from,
                               [](const auto& entry, std::string_view key) { return entry.first < key; });
    pos_ = static_cast<size_t>(at - window_.entries.begin());
    return;  // past the last entry of a window that ends the range: not Valid(), as at the end
  }
  Load({std::string(from), true, false, false});
}

bool ReconcilingIterator::Covers(std::string_view target) const {
  if (!fetched_from_ || fetched_from_->reverse) return false;
  const std::string_view start = fetched_from_->from;
  if (target < start || (target == start && !fetched_from_->inclusive)) return false;
  if (!window_.more) return true;  // to the range's end
  return !window_.entries.empty() && target <= window_.entries.back().first;
}

void ReconcilingIterator::SeekForPrev(std::string_view target) {
  if (target < lower_) {
    window_ = {};
    fetched_from_.reset();
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
