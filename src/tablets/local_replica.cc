#include <algorithm>
#include <string>

#include "tablets/replica.h"
#include "tracing/trace_session.h"

namespace tessera {

// One node: its own store is every replica, so the consistency is met by
// the write or read itself. A traced request records each step with the
// time it took (tracing/trace_session.h).

Status LocalReplica::Apply(const WriteSet& writes, const RequestConsistency& consistency) {
  Status s = engine_->Write(writes);
  if (consistency.trace) {
    consistency.trace->Event(s.ok() ? "Applied " + std::to_string(writes.ops().size()) + " writes to the local store"
                                    : "Writing to the local store failed: " + s.message());
  }
  return s;
}

Status LocalReplica::Get(std::string_view key, std::string* value, const RequestConsistency& consistency) {
  Status s = engine_->Get(key, value);
  if (consistency.trace) consistency.trace->Event("Read 1 key from the local store");
  return s;
}

void LocalReplica::MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                            std::vector<Status>* statuses, const RequestConsistency& consistency) {
  engine_->MultiGet(keys, values, statuses);
  if (consistency.trace) {
    consistency.trace->Event("Read " + std::to_string(keys.size()) + (keys.size() == 1 ? " key" : " keys") +
                             " from the local store");
  }
}

std::unique_ptr<KvIterator> LocalReplica::NewIterator(std::string lower, std::string upper,
                                                      const RequestConsistency& consistency) {
  if (consistency.trace) consistency.trace->Event("Scanning a key range of the local store");
  return engine_->NewIterator(std::move(lower), std::move(upper));
}

const std::string& IteratorLower(const KeyWindowRead& read) {
  const std::string* least = &read.lower;
  for (const std::string& k : read.keys) least = k < *least ? &k : least;
  return *least;
}

Result<KeyWindow> ReadWindowFrom(KvIterator* it, const KeyWindowRead& read, size_t strip_key_bytes) {
  KeyWindow window;
  // The point keys first, from one Seek and steps forward (a partition's
  // header and static row sort next to each other, below its rows): the
  // iterator's snapshot is the window's. A step costs far less than a Seek,
  // which visits every level of the store.
  constexpr int kMaxSteps = 8;  // then a Seek after all
  window.key_values.reserve(read.keys.size());
  for (size_t i = 0; i < read.keys.size(); ++i) {
    const std::string& key = read.keys[i];
    if (key >= read.lower || (i > 0 && key <= read.keys[i - 1])) {
      return Status::InvalidArgument("the keys read with a window must ascend below its range");
    }
    if (i == 0) {
      it->Seek(key);
    } else {
      int steps = 0;
      while (it->Valid() && it->key() < key && steps++ < kMaxSteps) it->Next();
      if (it->Valid() && it->key() < key) it->Seek(key);
    }
    if (it->Valid() && it->key() == key) {
      window.key_values.emplace_back(std::string(it->value()));
    } else {
      window.key_values.emplace_back(std::nullopt);
    }
  }
  TESSERA_RETURN_IF_ERROR(it->status());
  // A forward window needs no Seek when the iterator, past the last point
  // key, already stands at or beyond its start: no key lies between.
  bool at_start = false;
  if (!read.reverse && !read.keys.empty()) {
    if (it->Valid() && it->key() == read.keys.back()) it->Next();
    at_start = !it->Valid() || it->key() >= read.from;
    TESSERA_RETURN_IF_ERROR(it->status());
  }
  // With point keys the iterator reaches below `lower`: a reverse window stops there itself.
  const bool check_lower = !read.keys.empty();
  if (!read.reverse) {
    if (!at_start) it->Seek(read.from);
    if (!read.from_inclusive && it->Valid() && it->key() == read.from) it->Next();
  } else if (read.from_end) {
    it->SeekToLast();
  } else {
    it->SeekForPrev(read.from);
    if (!read.from_inclusive && it->Valid() && it->key() == read.from) it->Prev();
  }
  for (; it->Valid(); read.reverse ? it->Prev() : it->Next()) {
    if (check_lower && it->key() < read.lower) break;
    if (window.entries.size() >= read.limit) {
      window.more = true;
      break;
    }
    window.entries.emplace_back(std::string(it->key().substr(std::min(strip_key_bytes, it->key().size()))),
                                std::string(it->value()));
  }
  TESSERA_RETURN_IF_ERROR(it->status());
  return window;
}

void Replica::ReadWindowAsync(const KeyWindowRead& read, const RequestConsistency& consistency, WindowDone done) {
  auto it = NewIterator(IteratorLower(read), read.upper, consistency);
  done(ReadWindowFrom(it.get(), read));
}

uint64_t LocalReplica::ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables) {
  return engine_->ApproximateSize(begin, end, include_memtables);
}

}  // namespace tessera
