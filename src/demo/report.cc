#include "demo/report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "demo/report_parts.h"

namespace tessera::demo {
namespace {

// Columns: samples over time; each column split into its tablets in key
// order (top: the start of the key space); colour: writes per second.
std::string Heatmap(const TableReport& t) {
  const double width = 760, height = 220, left = 60, top = 10;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 20 << "\" height=\"" << top + height + 40
      << "\" role=\"img\" aria-label=\"write heatmap of " << Html(t.name) << "\">";
  const auto& s = t.timeline;
  double peak = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    const double dt = std::max(1e-3, s[i].seconds - s[i - 1].seconds);
    for (const auto& tab : s[i].tablets) peak = std::max(peak, static_cast<double>(tab.interval_writes) / dt);
  }
  const double span = s.size() > 1 ? s.back().seconds - s.front().seconds : 1;
  for (size_t i = 1; i < s.size(); ++i) {
    const double dt = std::max(1e-3, s[i].seconds - s[i - 1].seconds);
    const double x = left + width * (s[i - 1].seconds - s.front().seconds) / std::max(span, 1e-3);
    const double w = std::max(1.0, width * dt / std::max(span, 1e-3));
    const double h = height / static_cast<double>(std::max<size_t>(1, s[i].tablets.size()));
    for (size_t k = 0; k < s[i].tablets.size(); ++k) {
      const double rate = static_cast<double>(s[i].tablets[k].interval_writes) / dt;
      svg << "<rect x=\"" << x << "\" y=\"" << top + h * static_cast<double>(k) << "\" width=\"" << w
          << "\" height=\"" << h << "\" fill=\"" << HeatColour(peak > 0 ? rate / peak : 0)
          << "\" stroke=\"#ddd\" stroke-width=\"0.3\"><title>t=" << s[i].seconds << "s tablet "
          << s[i].tablets[k].id << ": " << static_cast<int64_t>(rate) << " writes/s</title></rect>";
    }
  }
  svg << "<text x=\"" << left << "\" y=\"" << top + height + 16 << "\" font-size=\"11\">0 s</text>";
  svg << "<text x=\"" << left + width - 40 << "\" y=\"" << top + height + 16 << "\" font-size=\"11\">"
      << static_cast<int>(span + 0.5) << " s</text>";
  svg << "<text x=\"" << left + width / 2 - 30 << "\" y=\"" << top + height + 32
      << "\" font-size=\"11\">time (load)</text>";
  svg << "<text x=\"4\" y=\"" << top + 12 << "\" font-size=\"11\">key start</text>";
  svg << "<text x=\"4\" y=\"" << top + height << "\" font-size=\"11\">key end</text>";
  svg << "<text x=\"" << left + width - 150 << "\" y=\"" << top + height + 32 << "\" font-size=\"11\">peak "
      << static_cast<int64_t>(peak) << " writes/s</text></svg>";
  return svg.str();
}

std::string Seconds1(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", s);
  return b;
}

}  // namespace

std::string RenderText(const DemoReport& r) {
  std::ostringstream out;
  out << "\n== Tessera demo report ==\n\n";
  if (!r.keyviz_url.empty()) out << "Live Key Visualizer: " << r.keyviz_url << "\n\n";
  for (const auto& t : r.tables) {
    out << t.name << "  (" << t.design << ")\n";
    out << "  loaded " << t.loaded << " of " << t.file_rows << " rows from " << t.source_file << " in " << t.load_seconds
        << " s; " << t.rejected << " rejected; SELECT count(*) = " << t.counted << "\n";
    out << "  tablets: " << t.tablets << " now (up to " << t.distribution.max_tablets << " during the load); "
        << "writes on the last tablet: " << Percent(t.distribution.last_tablet_share)
        << "; busiest tablet per interval: " << Percent(t.distribution.busiest_tablet_share) << "\n";
    if (t.bucket_raise_seconds >= 0) {
      out << "  buckets raised " << Seconds1(t.bucket_raise_seconds) << " s into the load (" << t.bucket_raise
          << "); since then the busiest tablet per interval took " << Percent(t.after_raise.busiest_tablet_share)
          << " of " << t.after_raise.writes << " writes\n";
    }
    out << "\n";
  }
  if (!r.time_order.empty()) out << r.time_order << "\n\n";
  out << QueriesText(r.queries, 5);
  out << "\nHot partitions (top by writes):\n";
  for (const auto& h : r.hot_partitions) out << "  " << h.table << " " << h.subject << ": " << h.detail << "\n";
  out << "\nTablet events (holds: splits the balancer declined):\n";
  for (const auto& e : r.tablet_events) {
    if (e.kind == "hold") out << "  " << e.table << " " << e.kind << ": " << e.detail << "\n";
  }
  size_t splits = 0;
  for (const auto& e : r.tablet_events) splits += e.kind == "split";
  out << "  (" << splits << " splits in all)\n\nKey advice:\n";
  for (const auto& a : r.key_advice) {
    out << "  " << a.keyspace << "." << a.table << " [" << a.kind << "] " << a.subject << "\n    " << a.evidence
        << "\n    -> " << a.advice << "\n";
  }
  return out.str();
}

std::string RenderJson(const DemoReport& r) {
  nlohmann::json j = {{"tables", nlohmann::json::array()},         {"queries", nlohmann::json::array()},
                      {"hot_partitions", nlohmann::json::array()}, {"tablet_events", nlohmann::json::array()},
                      {"key_advice", nlohmann::json::array()}};
  for (const auto& t : r.tables) {
    nlohmann::json tl = nlohmann::json::array();
    for (const auto& s : t.timeline) {
      nlohmann::json tabs = nlohmann::json::array();
      for (const auto& x : s.tablets) tabs.push_back({{"tablet", x.id}, {"writes", x.interval_writes}});
      tl.push_back({{"seconds", s.seconds}, {"tablets", tabs}});
    }
    j["tables"].push_back({{"name", t.name}, {"design", t.design}, {"create", t.create_cql},
                           {"source_file", t.source_file}, {"file_rows", t.file_rows}, {"loaded", t.loaded},
                           {"rejected", t.rejected}, {"counted", t.counted}, {"load_seconds", t.load_seconds},
                           {"tablets", t.tablets}, {"max_tablets", t.distribution.max_tablets},
                           {"writes_sampled", t.distribution.writes},
                           {"last_tablet_write_share", t.distribution.last_tablet_share},
                           {"busiest_tablet_write_share", t.distribution.busiest_tablet_share}, {"timeline", tl}});
    if (t.bucket_raise_seconds >= 0) {
      j["tables"].back()["bucket_raise"] = {{"seconds", t.bucket_raise_seconds}, {"reason", t.bucket_raise},
                                            {"writes_after", t.after_raise.writes},
                                            {"busiest_tablet_write_share_after", t.after_raise.busiest_tablet_share}};
    }
  }
  j["time_order"] = r.time_order;
  j["queries"] = QueriesJson(r.queries);
  for (const auto& h : r.hot_partitions) {
    j["hot_partitions"].push_back({{"table", h.table}, {"kind", h.kind}, {"partition_key", h.subject}, {"detail", h.detail}});
  }
  for (const auto& e : r.tablet_events) {
    j["tablet_events"].push_back({{"table", e.table}, {"kind", e.kind}, {"detail", e.detail}});
  }
  for (const auto& a : r.key_advice) {
    j["key_advice"].push_back({{"table", a.keyspace + "." + a.table}, {"kind", a.kind}, {"subject", a.subject},
                               {"score", a.score}, {"evidence", a.evidence}, {"advice", a.advice}});
  }
  j["balancer"] = r.balancer;
  j["keyviz_url"] = r.keyviz_url;
  return j.dump(2);
}

std::string RenderHtml(const DemoReport& r) {
  std::ostringstream h;
  h << HtmlHead("Tessera demo report", "h2{margin-top:32px}.advice{color:#064}");
  h << "<h1>Tessera demo: key design and the spread of load</h1>\n<p>Real data loaded through the CQL front door "
       "(<code>tessera load</code>): the NASA-HTTP access log of 1995-08-01 in three key designs, and the Numenta "
       "Anomaly Benchmark metric series. Balancer: "
    << Html(r.balancer) << ".</p>\n";
  if (!r.keyviz_url.empty()) {
    h << "<p>Live: <a id=\"keyviz\" href=\"" << Html(r.keyviz_url) << "\">the Key Visualizer</a> shows load over key "
         "space and time for every table, with the pattern named and the fix proposed, while the node runs.</p>\n";
  }
  h << "<h2>Tables</h2><table><tr><th>table</th><th>design</th><th class=\"num\">file rows</th><th class=\"num\">"
       "loaded</th><th class=\"num\">rejected</th><th class=\"num\">count(*)</th><th class=\"num\">tablets</th>"
       "<th class=\"num\">writes on last tablet</th><th class=\"num\">busiest tablet</th></tr>\n";
  for (const auto& t : r.tables) {
    h << "<tr><td><code>" << Html(t.name) << "</code></td><td>" << Html(t.design) << "</td><td class=\"num\">"
      << t.file_rows << "</td><td class=\"num\">" << t.loaded << "</td><td class=\"num\">" << t.rejected
      << "</td><td class=\"num\">" << t.counted << "</td><td class=\"num\">" << t.tablets << "</td><td class=\"num\">"
      << Percent(t.distribution.last_tablet_share) << "</td><td class=\"num\">"
      << Percent(t.distribution.busiest_tablet_share) << "</td></tr>\n";
  }
  h << "</table>\n";
  for (const auto& t : r.tables) {
    if (t.bucket_raise_seconds < 0) continue;
    h << "<p><code>" << Html(t.name) << "</code>: buckets raised " << Seconds1(t.bucket_raise_seconds) << " s into the load ("
      << Html(t.bucket_raise) << "); since then the busiest tablet per interval took "
      << Percent(t.after_raise.busiest_tablet_share) << " of " << t.after_raise.writes << " writes.</p>\n";
  }
  if (!r.time_order.empty()) h << "<p>" << Html(r.time_order) << "</p>\n";
  for (const auto& t : r.tables) {
    h << "<h2>Load over key space and time: <code>" << Html(t.name) << "</code></h2>\n<p><code>"
      << Html(t.create_cql) << "</code></p>\n"
      << Heatmap(t) << "\n";
  }
  h << "<h2>Key advice</h2><table><tr><th>table</th><th>condition</th><th>subject</th><th>evidence</th>"
       "<th>advice</th></tr>\n";
  for (const auto& a : r.key_advice) {
    h << "<tr><td><code>" << Html(a.keyspace + "." + a.table) << "</code></td><td>" << Html(a.kind) << "</td><td>"
      << Html(a.subject) << "</td><td>" << Html(a.evidence) << "</td><td class=\"advice\">" << Html(a.advice)
      << "</td></tr>\n";
  }
  h << "</table>\n<h2>Hot partitions</h2><table><tr><th>table</th><th>by</th><th>partition</th><th>detail</th></tr>\n";
  for (const auto& x : r.hot_partitions) {
    h << "<tr><td><code>" << Html(x.table) << "</code></td><td>" << Html(x.kind) << "</td><td>" << Html(x.subject)
      << "</td><td>" << Html(x.detail) << "</td></tr>\n";
  }
  h << "</table>\n<h2>Tablet events</h2><table><tr><th>table</th><th>event</th><th>reason</th></tr>\n";
  for (const auto& e : r.tablet_events) {
    h << "<tr><td><code>" << Html(e.table) << "</code></td><td>" << Html(e.kind) << "</td><td>" << Html(e.detail)
      << "</td></tr>\n";
  }
  h << "</table>\n<h2>The seeds' queries</h2>\n";
  h << QueriesHtml(r.queries, 10);
  h << "</body></html>\n";
  return h.str();
}

}  // namespace tessera::demo
