// ResultPrinter: rows as cqlsh prints them — an aligned table
//
//    k | name  | score
//   ---+-------+-------
//    1 | alice |   2.5
//
// (numbers right-aligned, everything else left-aligned, null as "null"),
// or, in expanded mode, one "@ Row n" block per row. The "(n rows)" footer
// is the caller's, since a result may come in several pages.
//
// Thread safety: pure.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cql/protocol/response_decoding.h"

namespace tessera::shell {

// Prints `rows` (one page) under `columns`. `first_row` numbers expanded rows.
void PrintRows(const std::vector<cql::ColumnSpec>& columns, const cql::DecodedRows& rows, bool expanded,
               size_t first_row, std::ostream& out);

}  // namespace tessera::shell
