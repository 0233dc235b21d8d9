// RowBuilder: builds one row of a virtual table (system_tables.h) by
// column name. Values are v4-serialized (native protocol v4 §6); a value
// that does not match the column's type, or a name the table lacks, is left
// null rather than failing, since virtual rows are built from trusted code.
//
// Thread safety: one builder per thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "cql/executor/result_set.h"
#include "types/schema.h"
#include "types/serialization.h"
#include "types/value.h"

namespace tessera::cql {

// The inet value of an address's text; 127.0.0.1 for one that does not parse.
inline Value InetValue(const std::string& address) {
  std::string bytes = InetAddressBytes(address);
  return Value::Bytes(bytes.empty() ? std::string("\x7f\x00\x00\x01", 4) : bytes);
}

// A map<text, text> value.
inline Value StringMapValue(const std::map<std::string, std::string>& m) {
  std::vector<std::pair<Value, Value>> entries;
  for (const auto& [k, v] : m) entries.emplace_back(Value::Bytes(k), Value::Bytes(v));
  return Value::Map(std::move(entries));
}

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
  // An inet column from an address's text; 127.0.0.1 for one that does not parse.
  RowBuilder& Inet(const char* column, const std::string& address) { return Set(column, InetValue(address)); }
  // A map<text, text> column.
  RowBuilder& TextMap(const char* column, const std::map<std::string, std::string>& m) {
    return Set(column, StringMapValue(m));
  }
  SourceRow Take() { return std::move(row_); }

 private:
  const TableSchema& t_;
  SourceRow row_;
};

}  // namespace tessera::cql
