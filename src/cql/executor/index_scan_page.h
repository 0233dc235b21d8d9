// The state of one page of a secondary-index scan (index_scan.h), shared by
// its two readers: RunIndexScan, which reads as it goes, and
// RunIndexScanAsync (index_scan_async.cc), which holds no thread while the
// replicas answer. Both walk the index partition in entry order and emit
// the same rows through this class, so their pages are equal.
//
// An index entry's clustering is the base row's partition key followed by
// its clustering key. The paging cursor (kind 4) is the last entry consumed.
//
// Thread safety: none; one reader drives it at a time.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cql/executor/index_scan.h"

namespace tessera::cql {

class IndexScanPage {
 public:
  // REQUIRES: `choice` and `out` outlive the page.
  IndexScanPage(const std::shared_ptr<const TableSchema>& table, const IndexChoice& choice,
                const IndexScanLimits& limits, int64_t now_micros, std::vector<SourceRow>* out);

  // Takes the page's starting state; sets *after to the bound just past the
  // cursor's entry (nullopt: from the index partition's start).
  // Errors: InvalidArgument "Invalid paging state".
  [[nodiscard]] Status Start(PagingState state, std::optional<ClusteringBound>* after);

  // Rows this page still wants (LIMIT, and the page size unless keep_all).
  uint64_t Wanted() const {
    const uint64_t by_limit = limits_.limit - std::min(limits_.limit, state_.rows_so_far);
    if (limits_.keep_all) return by_limit;
    return std::min(by_limit, limits_.page - std::min<uint64_t>(limits_.page, out_->size()));
  }
  // The index slice to read next, from `after`: as many entries as the
  // rows the page still wants (Wanted), at least 16 and at most 1,000.
  SliceRequest IndexSlice(const std::optional<ClusteringBound>& after) const;

  // Splits an entry into the base row's partition key and clustering key;
  // false for a malformed entry (shorter than the partition key), which is
  // skipped.
  bool Split(const RowResult& entry, std::vector<std::string>* pk, std::vector<std::string>* ck) const;
  // Consumes `entry` (Split into `pk`): `rows` are the base rows it stands
  // for (none: a stale entry; an index on a static column: the partition's
  // rows), each checked against every restriction and PER PARTITION LIMIT,
  // with the partition's static row; a static-index partition with no rows
  // shows its static row alone. The cursor moves past the entry.
  void Consume(const RowResult& entry, const std::vector<std::string>& pk, const std::vector<RowResult>& rows,
               const std::optional<RowResult>& static_row);
  // Ends the page: sets *next to the paging state when another page may
  // follow (not after LIMIT, nor with keep_all).
  void Pause(std::optional<std::string>* next) const;

  bool static_index() const { return static_index_; }
  const std::shared_ptr<const TableSchema>& table() const { return t_; }
  const IndexChoice& choice() const { return choice_; }

 private:
  void Emit(SourceRow row);

  std::shared_ptr<const TableSchema> t_;
  const IndexChoice& choice_;
  IndexScanLimits limits_;
  uint32_t now_;
  std::vector<SourceRow>* out_;
  size_t pk_size_;
  bool static_index_;
  PagingState state_;
  std::vector<std::string> last_pk_;
};

}  // namespace tessera::cql
