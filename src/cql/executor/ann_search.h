// SELECT ... ORDER BY v ANN OF [...] LIMIT k: the rows whose vector is
// nearest, as Cassandra 5.0's storage-attached index answers it.
//
// The flow (db/vector_index.h has the index):
//   1. checks, with Cassandra's messages: the column is a float vector with a
//      vector index; LIMIT at most 1000; no restriction but the whole
//      partition key (= / IN);
//   2. candidates, tablet by tablet: the tablets this node stores are asked
//      of its own index, over their key ranges; each tablet held only by
//      other nodes, of one of its replicas' (Replica::SearchVectors: the
//      fastest first, the next when one fails); a tablet none of whose
//      replicas' indexes answers is read whole at the request's consistency
//      level and ranked exactly. With the partition key restricted, the
//      partitions' rows are the candidates (exact);
//   3. each candidate row is read back at the request's consistency level
//      (so a stale index entry costs recall, never a wrong or old row) and
//      ranked by the exact similarity; the first k are the answer, nearest
//      first. Too few live rows among the candidates: asked again for more.
// One page: k rows at most; the paging state is never set.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "cql/executor/source_rows.h"
#include "cql/executor/term_binder.h"
#include "cql/parser/raw_statements.h"
#include "coordinator/coordinator.h"
#include "db/database.h"

namespace tessera::cql {

// The greatest k (LIMIT) of ANN OF, as Cassandra 5.0's default bound.
inline constexpr uint64_t kMaxAnnLimit = 1000;

// Appends the k nearest rows to `out`, nearest first. `limit`: the bound
// LIMIT (UINT64_MAX: none). REQUIRES: s.ann.
// Errors: InvalidArgument for the checks above and a bad query vector;
// storage and consistency errors of the reads.
Status RunAnnSearch(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, const SelectStatement& s,
                    uint64_t limit, const BindContext& bind, const RequestConsistency& consistency,
                    std::vector<SourceRow>* out);

}  // namespace tessera::cql
