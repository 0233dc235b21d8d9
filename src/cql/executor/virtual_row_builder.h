// RowBuilder: builds one row of a virtual table (system_tables.h) by
// column name. Values are v4-serialized (native protocol v4 §6); a value
// that does not match the column's type, or a name the table lacks, is left
// null rather than failing, since virtual rows are built from trusted code.
//
// Thread safety: one builder per thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "cql/executor/result_set.h"
#include "types/schema.h"
#include "types/serialization.h"
#include "types/value.h"

namespace tessera::cql {

// A row builder: values by column name.
class RowBuilder {
 public:
  explicit RowBuilder(const TableSchema& t) : t_(t) {
    row_.values.resize(t.columns.size());
    row_.writetime.resize(t.columns.size());
    row_.ttl.resize(t.columns.size());
  }
  RowBuilder& Set(const char* column, const Value& v) {
    const ColumnDef* c = t_.FindColumn(column);
    if (c && !v.is_null()) {
      std::string bytes;
      if (Serialize(c->type, v, &bytes).ok()) row_.values[static_cast<size_t>(c - t_.columns.data())] = bytes;
    }
    return *this;
  }
  RowBuilder& Text(const char* column, const std::string& s) { return Set(column, Value::Bytes(s)); }
  RowBuilder& Int(const char* column, int64_t v) { return Set(column, Value::Int(v)); }
  SourceRow Take() { return std::move(row_); }

 private:
  const TableSchema& t_;
  SourceRow row_;
};

}  // namespace tessera::cql
