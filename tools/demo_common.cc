#include "tools/demo_common.h"

#include <chrono>

#include "common/bytes.h"
#include "types/value_format.h"

namespace tessera {

std::string NasaAccessLogPath(const std::string& datasets) { return datasets + "/nasa_http/nasa_19950801.tsv"; }

std::vector<loader::ColumnMapping> NasaAccessMapping() {
  return {{"ts", "time"},         {"seq", "@line"}, {"host", "host"},         {"method", "method"},
          {"url", "url"},         {"response", "response"}, {"bytes", "bytes"}};
}

Result<demo::QueryReport> AskForReport(client::CqlConnection& conn, const std::string& title, const std::string& cql) {
  demo::QueryReport q{title, cql, {}, {}, 0};
  const auto start = std::chrono::steady_clock::now();
  cql::QueryParameters p;
  p.page_size = 5000;
  TESSERA_ASSIGN_OR_RETURN(auto r, conn.Query(cql, p));
  q.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const auto& c : r.rows.columns) q.columns.push_back(c.name);
  for (const auto& row : r.rows.rows) {
    std::vector<std::string> cells;
    for (size_t i = 0; i < row.size(); ++i) cells.push_back(row[i] ? FormatValue(r.rows.columns[i].type, *row[i]) : "null");
    q.rows.push_back(std::move(cells));
  }
  return q;
}

Result<int64_t> AskForInt64(client::CqlConnection& conn, const std::string& cql) {
  TESSERA_ASSIGN_OR_RETURN(auto r, conn.Query(cql));
  if (r.rows.rows.empty() || r.rows.rows[0].empty() || !r.rows.rows[0][0] || r.rows.rows[0][0]->size() != 8) {
    return Status::Corruption(cql + " returned no 8-byte value");
  }
  return static_cast<int64_t>(GetBigEndian64(r.rows.rows[0][0]->data()));
}

}  // namespace tessera
