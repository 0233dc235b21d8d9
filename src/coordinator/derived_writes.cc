// Coordinator (coordinator/coordinator.h): a write to a table with secondary
// indexes or views, as a chain of steps that holds no thread while it waits.
//
//   lock its partitions (PartitionLocks: granted at once, or by the write
//   before) -> read what it touches -> write the base rows -> read again ->
//   write the index entries' and view rows' difference (one write) -> answer
//   -> release the locks.
//
// Each step starts the next from the thread its answer came on (this one,
// or a replica answer's). The blocking ApplyBatch waits for the same chain
// after taking its locks with PartitionLocks::Lock, so both forms exclude
// each other and the builds, which lock each partition they read.
#include <algorithm>
#include <atomic>
#include <mutex>

#include "common/blocking_wait.h"
#include "coordinator/coordinator.h"

namespace tessera {
namespace {

// Answers `done` once `parts` calls of Part() answered: the first error,
// else OK. Thread-safe.
class Join {
 public:
  Join(size_t parts, std::function<void(Status)> done) : remaining_(parts), done_(std::move(done)) {}
  void Part(Status s) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!s.ok() && first_.ok()) first_ = std::move(s);
    if (--remaining_ > 0) return;
    Status first = std::move(first_);
    lock.unlock();
    done_(std::move(first));
  }

 private:
  std::mutex mu_;
  size_t remaining_;
  Status first_;
  std::function<void(Status)> done_;
};

}  // namespace

struct Coordinator::DerivedWrite {
  std::vector<Mutation> mutations;
  std::vector<IndexedWrite> indexed;  // into `mutations`
  RequestConsistency consistency;
  IndexEntrySets before;
  ViewRowSets views_before;
  std::vector<std::string> warnings;
  PartitionLocks::Held held;
  WriteDone done;
};

std::vector<std::string> Coordinator::LockKeysOf(const std::vector<IndexedWrite>& indexed) {
  std::vector<std::string> keys;
  keys.reserve(indexed.size());
  for (const IndexedWrite& w : indexed) keys.push_back(PartitionLocks::KeyOf(w.table->id, w.mutation->partition_key));
  return keys;
}

std::shared_ptr<Coordinator::DerivedWrite> Coordinator::MakeDerivedWrite(const std::vector<Mutation>& mutations,
                                                                       const std::vector<IndexedWrite>& indexed,
                                                                       const RequestConsistency& consistency,
                                                                       WriteDone done) {
  auto w = std::make_shared<DerivedWrite>();
  w->mutations = mutations;
  for (const IndexedWrite& i : indexed) {
    w->indexed.push_back({&w->mutations[static_cast<size_t>(i.mutation - mutations.data())], i.table});
  }
  w->consistency = consistency;
  w->done = std::move(done);
  return w;
}

void Coordinator::ApplyWithDerivedRowsAsync(const std::vector<Mutation>& mutations,
                                            const std::vector<IndexedWrite>& indexed,
                                            const RequestConsistency& consistency, WriteDone done) {
  auto w = MakeDerivedWrite(mutations, indexed, consistency, std::move(done));
  partition_locks_.Acquire(LockKeysOf(w->indexed), [this, w](PartitionLocks::Held held) {
    w->held = std::move(held);
    RunDerivedWrite(w);
  });
}

Status Coordinator::ApplyWithDerivedRows(const std::vector<Mutation>& mutations,
                                         const std::vector<IndexedWrite>& indexed,
                                         std::vector<std::string>* warnings, const RequestConsistency& consistency) {
  PartitionLocks::Held held = partition_locks_.Lock(LockKeysOf(indexed));
  using Answer = std::pair<Status, std::vector<std::string>>;
  auto [status, more] = WaitFor<Answer>([&](auto answer) {
    auto w = MakeDerivedWrite(mutations, indexed, consistency,
                              [answer](Status s, std::vector<std::string> warnings) mutable {
                                answer(Answer{std::move(s), std::move(warnings)});
                              });
    w->held = std::move(held);
    RunDerivedWrite(std::move(w));
  });
  if (warnings) warnings->insert(warnings->end(), more.begin(), more.end());
  return status;
}

void Coordinator::RunDerivedWrite(std::shared_ptr<DerivedWrite> w) {
  // The answer first, then the locks: a write granted by this release runs
  // after this one's reply left.
  auto finish = [](const std::shared_ptr<DerivedWrite>& w, Status s) {
    WriteDone done = std::move(w->done);
    done(std::move(s), std::move(w->warnings));
    w->held.Release();
  };
  // Tests hold a write here, its partitions locked (common/failpoints.h).
  const TableSchema& first = *w->indexed.front().table;
  if (Status held = db_->HitFailpoint("coordinator.derived_write." + first.keyspace + "." + first.name); !held.ok()) {
    return finish(w, std::move(held));
  }
  CollectDerivedAsync(w->indexed, w->consistency, [this, w, finish](Status s, IndexEntrySets before,
                                                                      ViewRowSets views_before) {
    if (!s.ok()) return finish(w, std::move(s));
    w->before = std::move(before);
    w->views_before = std::move(views_before);
    WriteBaseAsync(w->mutations, w->consistency, [this, w, finish](Status s, std::vector<std::string> warnings) {
      w->warnings = std::move(warnings);
      if (!s.ok()) return finish(w, std::move(s));
      CollectDerivedAsync(w->indexed, w->consistency, [this, w, finish](Status s, IndexEntrySets after,
                                                                          ViewRowSets views_after) {
        if (!s.ok()) return finish(w, std::move(s));
        for (const auto& [key, entries] : after) w->before.try_emplace(key);  // a key only after: all new
        std::vector<Mutation> changes;
        IndexChanges(w->before, after, &changes);
        ViewChanges(w->views_before, views_after, &changes);
        if (changes.empty()) return finish(w, Status::OK());
        WriteBaseAsync(changes, w->consistency,
                       [w, finish](Status s, std::vector<std::string>) { finish(w, std::move(s)); });
      });
    });
  });
}

void Coordinator::WriteBaseAsync(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                                 WriteDone done) {
  if (!replicated()) {
    std::vector<std::string> warnings;
    Status s = ApplyBase(mutations, &warnings, consistency);
    return done(std::move(s), std::move(warnings));
  }
  ApplyBaseAsync(mutations, consistency, std::move(done));
}

void Coordinator::CollectDerivedAsync(const std::vector<IndexedWrite>& writes, const RequestConsistency& consistency,
                                      DerivedDone done) {
  // Every partition read at once; the sets made in the writes' order.
  struct Reads {
    std::vector<TouchedRows> touched;
  };
  if (writes.empty()) return done(Status::OK(), {}, {});
  auto reads = std::make_shared<Reads>();
  reads->touched.resize(writes.size());
  auto join = std::make_shared<Join>(writes.size(), [this, writes, reads, done = std::move(done)](Status s) {
    IndexEntrySets entries;
    ViewRowSets views;
    if (s.ok()) {
      for (size_t i = 0; i < writes.size(); ++i) AddDerived(writes[i], reads->touched[i], &entries, &views);
      for (auto& [key, e] : entries) {
        std::sort(e.begin(), e.end());
        e.erase(std::unique(e.begin(), e.end()), e.end());
      }
    }
    done(std::move(s), std::move(entries), std::move(views));
  });
  for (size_t i = 0; i < writes.size(); ++i) {
    ReadTouchedAsync(writes[i], consistency, [reads, join, i](Result<TouchedRows> r) {
      if (r.ok()) reads->touched[i] = std::move(*r);
      join->Part(r.status());
    });
  }
}

void Coordinator::ReadTouchedAsync(const IndexedWrite& w, const RequestConsistency& consistency, TouchedDone done) {
  const Mutation& m = *w.mutation;
  if (m.delete_partition || !m.range_deletions.empty()) {
    return ReadWholePartitionAsync(w.table, m.partition_key, consistency, std::move(done));
  }
  // Its rows (and static row) at once, kept in the order they were written.
  struct Rows {
    std::vector<std::optional<RowResult>> rows;
    std::optional<RowResult> static_row;
  };
  auto rows = std::make_shared<Rows>();
  std::vector<size_t> regular;
  for (size_t i = 0; i < m.rows.size(); ++i) {
    if (!m.rows[i].is_static) regular.push_back(i);
  }
  rows->rows.resize(regular.size());
  const bool static_row = NeedsStaticRow(w);
  const size_t parts = regular.size() + (static_row ? 1 : 0);
  if (parts == 0) return done(TouchedRows{});
  auto join = std::make_shared<Join>(parts, [rows, done = std::move(done)](Status s) {
    if (!s.ok()) return done(std::move(s));
    TouchedRows touched;
    touched.static_row = std::move(rows->static_row);
    for (auto& r : rows->rows) {
      if (r) touched.rows.push_back(std::move(*r));
    }
    done(std::move(touched));
  });
  for (size_t slot = 0; slot < regular.size(); ++slot) {
    ReadRowAsync(w.table, m.partition_key, m.rows[regular[slot]].clustering, consistency,
                 [rows, join, slot](Result<std::optional<RowResult>> r) {
                   if (r.ok()) rows->rows[slot] = std::move(*r);
                   join->Part(r.status());
                 });
  }
  if (static_row) {
    SliceRequest req;
    req.limit = 0;
    ReadSliceAsync(w.table, m.partition_key, req, consistency, [rows, join](Result<SliceResult> r) {
      if (r.ok()) rows->static_row = std::move(r->partition.static_row);
      join->Part(r.status());
    });
  }
}

void Coordinator::ReadWholePartitionAsync(const std::shared_ptr<const TableSchema>& table,
                                          const std::vector<std::string>& pk, const RequestConsistency& consistency,
                                          TouchedDone done) {
  // A page at a time, each asked from the answer to the one before; the
  // pending read holds the chain. A page answered at once (this node's
  // copy) is followed by a loop here, not by a call nested in the answer.
  enum Phase { kAsking, kAskAgain, kWaiting };
  struct Pages {
    std::shared_ptr<const TableSchema> table;
    std::vector<std::string> pk;
    RequestConsistency consistency;
    TouchedRows touched;
    bool first = true;
    TouchedDone done;
    std::string cursor;
    std::atomic<int> phase{kAsking};
    std::function<void(const std::shared_ptr<Pages>&)> ask;  // the pages from `cursor` on
  };
  auto pages = std::make_shared<Pages>();
  pages->table = table;
  pages->pk = pk;
  pages->consistency = consistency;
  pages->done = std::move(done);
  pages->ask = [this](const std::shared_ptr<Pages>& p) {
    for (;;) {
      p->phase.store(kAsking);
      SliceRequest req;
      req.cursor = p->cursor;
      ReadSliceAsync(p->table, p->pk, req, p->consistency, [p](Result<SliceResult> slice) {
        if (!slice.ok()) return p->done(slice.status());
        if (p->first) p->touched.static_row = slice->partition.static_row;
        p->first = false;
        for (auto& r : slice->partition.rows) p->touched.rows.push_back(std::move(r));
        if (slice->next_cursor.empty()) return p->done(std::move(p->touched));
        p->cursor = std::move(slice->next_cursor);
        int asking = kAsking;
        if (p->phase.compare_exchange_strong(asking, kAskAgain)) return;  // answered at once: the loop asks
        p->ask(p);
      });
      int asking = kAsking;
      if (p->phase.compare_exchange_strong(asking, kWaiting)) return;  // answered later (or done at once)
    }
  };
  pages->ask(pages);
}

Result<Coordinator::TouchedRows> Coordinator::ReadWholePartition(const std::shared_ptr<const TableSchema>& table,
                                                                 const std::vector<std::string>& pk,
                                                                 const RequestConsistency& consistency) {
  return WaitFor<Result<TouchedRows>>(
      [&](auto answer) { ReadWholePartitionAsync(table, pk, consistency, std::move(answer)); });
}

}  // namespace tessera
