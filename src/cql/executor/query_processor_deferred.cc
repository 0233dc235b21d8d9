// QueryProcessor's SELECTs answered from their reads' answers on a cluster
// node (issue 28 item 1): the first run's deferred reads are read here
// without holding a thread (ReadDeferred; ReadReplayed for a replayed run,
// DeferredRead::replay), and the last answer runs the statement again
// (RunDeferredSelect), folding the steps of a page read in steps. The rest
// of the processor is in query_processor.cc.
#include <atomic>
#include <mutex>

#include <spdlog/spdlog.h>

#include "cql/executor/query_processor.h"
#include "cql/executor/replayed_read.h"
#include "cql/executor/select_statement.h"

namespace tessera::cql {

// What the runs after a SELECT's first one need, copied: the request's
// bytes go once SelectAfterDeferredRead returns.
struct QueryProcessor::DeferredSelect {
  SelectStatement statement;
  std::vector<WireValue> values;
  SelectContext ctx;  // bind.values -> values, deferred -> deferred
  DeferredRead deferred;
  Consistency consistency{};
  bool skip_metadata = false;
  int32_t page_size = 0;          // the request's
  std::optional<ResultSet> page;  // the steps folded so far (FoldSelectStep)
  ReplyDone reply;
  // RunDeferredSelect runs on one thread at a time: an answer that comes
  // while it runs (on this thread, inside ReadDeferred, or on another just
  // before it ends) sets `again`, and the running call runs that step.
  std::mutex mu;
  bool running = false;  // guarded by mu
  bool again = false;    // guarded by mu
};

std::optional<Reply> QueryProcessor::SelectAfterDeferredRead(const SelectStatement& sel, const SelectContext& ctx,
                                                             DeferredRead deferred, const QueryParameters& params,
                                                             ReplyDone* later) {
  auto select = std::make_shared<DeferredSelect>();
  select->statement = sel;
  select->values = *ctx.bind.values;
  select->ctx = ctx;
  select->deferred = std::move(deferred);
  select->consistency = params.consistency;
  select->skip_metadata = params.skip_metadata;
  select->page_size = ctx.page_size;
  select->reply = std::exchange(*later, nullptr);
  select->ctx.bind.values = &select->values;
  select->ctx.deferred = &select->deferred;
  ReadDeferred(select);
  return std::nullopt;
}

// The reply is called once the processor's node has drained its replicas'
// answers at the latest, while this processor still exists (Node::Stop).
void QueryProcessor::ReadDeferred(const std::shared_ptr<DeferredSelect>& select) {
  // The requests are copied before the first goes out: an answer may come
  // on this thread, before the call returns, and its step may already
  // replace the slot with the next step's reads.
  const DeferredRead& r = select->deferred;
  const std::shared_ptr<const TableSchema> table = r.table;
  const RequestConsistency consistency = select->ctx.consistency;
  if (r.replay) {
    ReadReplayed(select);
    return;
  }
  if (r.index_scan) {
    const DeferredIndexScan& scan = *r.index_scan;
    RunIndexScanAsync(*coordinator_, table, scan.choice, scan.limits, scan.state, select->ctx.bind.now_micros, consistency,
                      [this, select](::tessera::Result<IndexScanResult> page) {
                        select->deferred.index_scan->result = std::move(page);
                        RunDeferredSelect(select);
                      });
    return;
  }
  if (r.range) {
    const RangeRequest range = *r.range;
    coordinator_->ScanRangeAsync(table, range, consistency, [this, select](::tessera::Result<RangeResult> page) {
      select->deferred.range_result = std::move(page);
      RunDeferredSelect(select);
    });
    return;
  }
  std::vector<std::pair<std::vector<std::string>, SliceRequest>> slices;
  for (const auto& slice : r.slices) slices.emplace_back(slice.partition_key, slice.request);
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> rows;
  for (const auto& row : r.rows) rows.emplace_back(row.partition_key, row.clustering);
  // Every read at once; the last answer runs the statement again.
  auto remaining = std::make_shared<std::atomic<size_t>>(rows.size() + slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    coordinator_->ReadSliceAsync(table, slices[i].first, slices[i].second, consistency,
                        [this, select, remaining, i](::tessera::Result<SliceResult> slice) {
                          select->deferred.slices[i].result = std::move(slice);
                          if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) RunDeferredSelect(select);
                        });
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    coordinator_->ReadRowAsync(table, rows[i].first, rows[i].second, consistency,
                      [this, select, remaining, i](::tessera::Result<std::optional<RowResult>> row) {
                        select->deferred.rows[i].result = std::move(row);
                        // acq_rel: the last answer sees every other row's result.
                        if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) RunDeferredSelect(select);
                      });
  }
}

// The reads a replayed run (DeferredRead::replay) found unanswered, all at
// once; the last answer runs the statement again.
void QueryProcessor::ReadReplayed(const std::shared_ptr<DeferredSelect>& select) {
  // A run that set `table` records a read it has no answer for: never false.
  if (!ReadReplayedAsync(*coordinator_, &select->deferred.replayed, select->ctx.consistency,
                         [this, select] { RunDeferredSelect(select); })) {
    spdlog::error("a replayed SELECT stopped at a read it did not record: {}", select->statement.table.name);
    select->reply(ServerError("internal error: a replayed SELECT recorded no read"));
  }
}

// Runs the statement again once the read's outcome is in the slot; a page
// read in steps (DeferredRead::paused) goes on with the next step's read.
// A step whose read is answered on this thread, inside ReadDeferred, is run
// by the loop here rather than by a call within that one (`again`), so that
// a page of many steps answered by this node's own store does not grow the
// stack step by step.
void QueryProcessor::RunDeferredSelect(const std::shared_ptr<DeferredSelect>& select) {
  {
    std::lock_guard<std::mutex> lock(select->mu);
    if (select->running) {
      select->again = true;
      return;
    }
    select->running = true;
  }
  for (;;) {
    Reply answer;
    bool read_on = false;
    try {
      select->ctx.bind.rng = &ThreadRandom();  // this thread's, not the request thread's
      select->ctx.defer_read = false;
      if (select->deferred.replay) select->deferred.table = nullptr;  // set again by a read still to make
      ::tessera::Result<ResultSet> rs = ExecuteSelect(*coordinator_, &system_tables_, select->statement, select->ctx);
      if (select->deferred.replay && select->deferred.table) read_on = true;
      while (!read_on && rs.ok() && (select->page || select->deferred.paused)) {
        if (!FoldSelectStep(std::move(*rs), select->page_size, &select->ctx, &select->page)) {
          rs = std::move(*select->page);
          break;
        }
        // The next step's first run stops at its read (binding and planning:
        // CPU only), as the request's first run did.
        rs = ExecuteSelect(*coordinator_, &system_tables_, select->statement, select->ctx);
        if (select->deferred.table) {
          read_on = true;
          break;
        }
        if (select->deferred.static_skipped) {  // it read nothing after all: a run that reads as it goes
          SelectContext plain = select->ctx;
          plain.deferred = nullptr;
          plain.defer_read = false;
          rs = ExecuteSelect(*coordinator_, &system_tables_, select->statement, plain);
        }
      }
      if (!read_on) answer = SelectReply(rs, select->consistency, select->skip_metadata);
    } catch (const std::exception& e) {
      spdlog::error("a SELECT failed with an exception after its deferred read: {}", e.what());
      answer = ServerError(std::string("internal error: ") + e.what());
      read_on = false;
    } catch (...) {
      spdlog::error("a SELECT failed with an unknown exception after its deferred read");
      answer = ServerError("internal error");
      read_on = false;
    }
    if (!read_on) {
      select->reply(std::move(answer));
      return;  // no read of this SELECT is left to answer
    }
    ReadDeferred(select);
    std::lock_guard<std::mutex> lock(select->mu);
    if (!select->again) {
      select->running = false;
      return;
    }
    select->again = false;
  }
}

}  // namespace tessera::cql
