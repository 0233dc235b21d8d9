#include "demo/report_parts.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace tessera::demo {

std::string Html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string HtmlHead(const std::string& title, const std::string& css) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + Html(title) +
         "</title><style>body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}"
         "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;"
         "text-align:left;vertical-align:top}th{background:#f3f3f3}code{background:#f6f6f6;padding:1px 3px}"
         ".num{text-align:right}" + css + "</style></head><body>\n";
}

std::string Percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", share * 100);
  return buf;
}

std::string HeatColour(double x) {
  x = std::clamp(x, 0.0, 1.0);
  const int g = static_cast<int>(245 - 200 * x), b = static_cast<int>(240 - 215 * x);
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", 255 - static_cast<int>(40 * x), g, b);
  return buf;
}

std::string QueriesText(const std::vector<QueryReport>& queries, size_t rows) {
  std::ostringstream out;
  for (const auto& q : queries) {
    out << "-- " << q.title << " (" << q.millis << " ms, " << q.rows.size() << " rows)\n   " << q.cql << "\n";
    for (size_t i = 0; i < q.rows.size() && i < rows; ++i) {
      out << "   ";
      for (size_t c = 0; c < q.rows[i].size(); ++c) out << (c ? " | " : "") << q.rows[i][c];
      out << "\n";
    }
  }
  return out.str();
}

nlohmann::json QueriesJson(const std::vector<QueryReport>& queries) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& q : queries) {
    out.push_back({{"title", q.title}, {"cql", q.cql}, {"columns", q.columns}, {"rows", q.rows}, {"millis", q.millis}});
  }
  return out;
}

std::string QueriesHtml(const std::vector<QueryReport>& queries, size_t rows) {
  std::ostringstream h;
  for (const auto& q : queries) {
    h << "<h3>" << Html(q.title) << " <small>(" << q.millis << " ms)</small></h3><p><code>" << Html(q.cql)
      << "</code></p><table><tr>";
    for (const auto& c : q.columns) h << "<th>" << Html(c) << "</th>";
    h << "</tr>\n";
    for (size_t i = 0; i < q.rows.size() && i < rows; ++i) {
      h << "<tr>";
      for (const auto& cell : q.rows[i]) h << "<td>" << Html(cell) << "</td>";
      h << "</tr>\n";
    }
    h << "</table>\n";
  }
  return h.str();
}

}  // namespace tessera::demo
