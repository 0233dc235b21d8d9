#include "cql/executor/write_guardrails.h"

namespace tessera::cql {
namespace {

std::string Kb(size_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KB"; }

}  // namespace

Status CheckWriteGuardrails(const std::vector<Mutation>& mutations, const Guardrails& g,
                            std::vector<std::string>* warnings) {
  for (const auto& m : mutations) {
    const TableSchema& t = *m.table;
    const std::string where = t.keyspace + "." + t.name;
    auto key_component = [&](const ColumnDef* col, const std::string& bytes) -> Status {
      if (bytes.size() > g.key_fail_bytes) {
        return Status::InvalidArgument("Key length of " + std::to_string(bytes.size()) + " is longer than maximum of " +
                                       std::to_string(g.key_fail_bytes) + " (column " + col->name + " of " + where + ")");
      }
      if (bytes.size() > g.key_warn_bytes) {
        warnings->push_back("Primary key column " + col->name + " of " + where + " is " + Kb(bytes.size()) +
                            " (guardrail " + Kb(g.key_warn_bytes) + "): large keys slow every read and index");
      }
      return Status::OK();
    };
    auto pk = t.PartitionKey();
    for (size_t i = 0; i < pk.size() && i < m.partition_key.size(); ++i) TESSERA_RETURN_IF_ERROR(key_component(pk[i], m.partition_key[i]));
    auto ck = t.Clustering();
    for (const auto& row : m.rows) {
      for (size_t i = 0; i < ck.size() && i < row.clustering.size(); ++i) TESSERA_RETURN_IF_ERROR(key_component(ck[i], row.clustering[i]));
      size_t row_bytes = 0;
      for (const auto& c : row.cells) {
        size_t size = (c.value ? c.value->size() : 0) + c.path.size();
        row_bytes += size;
        const ColumnDef* col = t.FindColumnById(c.column_id);
        const std::string name = col ? col->name : std::to_string(c.column_id);
        if (size > g.cell_fail_bytes) {
          return Status::InvalidArgument("Cell " + name + " of " + where + " is " + Kb(size) + ", over the maximum of " +
                                         Kb(g.cell_fail_bytes));
        }
        if (size > g.cell_warn_bytes) {
          warnings->push_back("Cell " + name + " of " + where + " is " + Kb(size) + " (guardrail " + Kb(g.cell_warn_bytes) +
                              "): store large values outside the table or split them");
        }
      }
      if (row_bytes > g.row_warn_bytes) {
        warnings->push_back("A row of " + where + " written with " + Kb(row_bytes) + " (guardrail " + Kb(g.row_warn_bytes) +
                            "): keep rows small (about 10 KB on average)");
      }
    }
  }
  return Status::OK();
}

}  // namespace tessera::cql
