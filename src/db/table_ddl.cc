#include "db/table_ddl.h"

namespace tessera {

std::string RedesignedTableCql(const TableSchema& table, const std::string& name,
                               const std::vector<std::pair<std::string, std::string>>& added_columns,
                               const std::vector<std::string>& partition_key, Distribution distribution) {
  std::string cql = "CREATE TABLE " + QuoteIdentifier(table.keyspace) + "." + QuoteIdentifier(name) + " (";
  for (const auto& [column, type] : added_columns) cql += QuoteIdentifier(column) + " " + type + ", ";
  for (const auto& c : table.columns) {
    cql += QuoteIdentifier(c.name) + " " + c.type.ToCql() + (c.kind == ColumnKind::kStatic ? " static" : "") + ", ";
  }
  std::string partition;
  for (const auto& c : partition_key) partition += (partition.empty() ? "" : ", ") + QuoteIdentifier(c);
  const auto clustering = table.Clustering();
  cql += "PRIMARY KEY (" + (partition_key.size() > 1 ? "(" + partition + ")" : partition);
  for (const auto* c : clustering) cql += ", " + QuoteIdentifier(c->name);
  cql += ")) WITH ";
  if (!clustering.empty()) {
    std::string order;
    for (const auto* c : clustering) {
      order += (order.empty() ? "" : ", ") + QuoteIdentifier(c->name) + (c->order == SortOrder::kDesc ? " DESC" : " ASC");
    }
    cql += "CLUSTERING ORDER BY (" + order + ") AND ";
  }
  cql += std::string("distribution = '") + ToString(distribution) + "'";
  return cql;
}

}  // namespace tessera
