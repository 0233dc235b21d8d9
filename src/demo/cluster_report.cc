#include "demo/cluster_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "demo/report_parts.h"

namespace tessera::demo {
namespace {

constexpr size_t kMaxColumns = 100;  // of the text and HTML timelines

uint64_t Sum(const std::vector<uint64_t>& v) {
  uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

// The timeline folded into at most kMaxColumns columns of per-node writes.
std::vector<std::vector<uint64_t>> Columns(const ClusterTableReport& t) {
  const size_t n = t.timeline.size(), per = (n + kMaxColumns - 1) / kMaxColumns;
  std::vector<std::vector<uint64_t>> out;
  for (size_t i = 0; i < n; i += std::max<size_t>(per, 1)) {
    std::vector<uint64_t> col(t.nodes.size(), 0);
    for (size_t j = i; j < std::min(n, i + per); ++j) {
      for (size_t k = 0; k < col.size() && k < t.timeline[j].writes.size(); ++k) col[k] += t.timeline[j].writes[k];
    }
    out.push_back(std::move(col));
  }
  return out;
}

char ShareMark(uint64_t part, uint64_t whole) {
  if (part == 0 || whole == 0) return ' ';
  const double s = static_cast<double>(part) / static_cast<double>(whole);
  return s >= 0.6 ? '#' : s >= 0.25 ? '+' : '.';
}

double Share(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

void SummarizeServed(ClusterTableReport* t) {
  uint64_t weighted = 0, total = 0, samples = 0, one_node = 0;
  for (const auto& s : t->timeline) {
    const uint64_t all = Sum(s.writes);
    if (all == 0) continue;
    const uint64_t busiest = *std::max_element(s.writes.begin(), s.writes.end());
    weighted += busiest;
    total += all;
    ++samples;
    one_node += Share(busiest, all) >= 0.9;
  }
  t->busiest_node_write_share = Share(weighted, total);
  t->one_node_sample_share = Share(one_node, samples);
  uint64_t writes = 0;
  for (const auto& n : t->nodes) writes += n.writes;
  t->nodes_serving_writes = 0;
  for (const auto& n : t->nodes) t->nodes_serving_writes += writes > 0 && Share(n.writes, writes) >= 0.1;
}

std::string RenderClusterText(const ClusterDemoReport& r) {
  std::ostringstream out;
  out << "\n== Tessera demo report: a cluster of " << r.nodes << " nodes, replication factor "
      << r.replication_factor << " (etcd at " << r.etcd << ") ==\n\n";
  for (const auto& t : r.tables) {
    uint64_t writes = 0, reads = 0;
    for (const auto& n : t.nodes) writes += n.writes, reads += n.reads;
    out << t.name << "  (" << t.design << ")\n";
    out << "  loaded " << t.loaded << " rows in " << t.load_seconds << " s, " << t.rejected
        << " rejected; SELECT count(*) = " << t.counted << "; " << t.tablets << " tablets\n";
    out << "  writes served:";
    for (const auto& n : t.nodes) out << "  node " << n.node << " " << n.writes << " (" << Percent(Share(n.writes, writes)) << ")";
    out << "\n  reads served: ";
    for (const auto& n : t.nodes) out << "  node " << n.node << " " << n.reads << " (" << Percent(Share(n.reads, reads)) << ")";
    out << "  [" << t.read_queries << " queries: " << t.read_query << "]\n  tablets held: ";
    for (const auto& n : t.nodes) out << "  node " << n.node << " " << n.tablets;
    out << "\n  at each moment the busiest node served " << Percent(t.busiest_node_write_share)
        << " of the writes (one node at least 90% in " << Percent(t.one_node_sample_share) << " of the samples); "
        << t.nodes_serving_writes << " of " << t.nodes.size() << " nodes served at least 10% of them\n";
    out << "  writes over time (a column per sample; # most of them, + a share, . a few):\n";
    const auto columns = Columns(t);
    for (size_t k = 0; k < t.nodes.size(); ++k) {
      out << "    node " << t.nodes[k].node << " |";
      for (const auto& col : columns) out << ShareMark(col[k], Sum(col));
      out << "|\n";
    }
    out << "\n";
  }
  out << QueriesText(r.queries, 3);
  std::map<std::string, size_t> kinds;
  for (const auto& e : r.tablet_events) ++kinds[e.kind];
  out << "\nTablet events:";
  for (const auto& [kind, count] : kinds) out << " " << count << " " << kind;
  out << "\n";
  return out.str();
}

std::string RenderClusterJson(const ClusterDemoReport& r) {
  nlohmann::json j = {{"nodes", r.nodes},       {"replication_factor", r.replication_factor},
                      {"etcd", r.etcd},         {"balancer", r.balancer},
                      {"tables", nlohmann::json::array()}, {"queries", QueriesJson(r.queries)},
                      {"tablet_events", nlohmann::json::array()}};
  for (const auto& t : r.tables) {
    nlohmann::json nodes = nlohmann::json::array(), timeline = nlohmann::json::array();
    for (const auto& n : t.nodes) {
      nodes.push_back({{"node", n.node}, {"address", n.address}, {"writes_served", n.writes},
                       {"reads_served", n.reads}, {"tablets", n.tablets}});
    }
    for (const auto& s : t.timeline) timeline.push_back({{"seconds", s.seconds}, {"writes", s.writes}});
    j["tables"].push_back({{"name", t.name}, {"design", t.design}, {"create", t.create_cql}, {"loaded", t.loaded},
                           {"rejected", t.rejected}, {"counted", t.counted}, {"load_seconds", t.load_seconds},
                           {"read_query", t.read_query}, {"read_queries", t.read_queries}, {"tablets", t.tablets},
                           {"busiest_node_write_share", t.busiest_node_write_share},
                           {"one_node_sample_share", t.one_node_sample_share},
                           {"nodes_serving_writes", t.nodes_serving_writes}, {"nodes", nodes},
                           {"timeline", timeline}});
  }
  for (const auto& e : r.tablet_events) {
    j["tablet_events"].push_back({{"table", e.table}, {"kind", e.kind}, {"node", e.subject}, {"detail", e.detail}});
  }
  return j.dump(2);
}

std::string RenderClusterHtml(const ClusterDemoReport& r) {
  std::ostringstream h;
  h << HtmlHead("Tessera demo report: a cluster", ".strip td{width:6px;height:14px;padding:0;border:0}");
  h << "<h1>Tessera demo on a cluster of " << r.nodes << " nodes</h1>\n<p>The NASA-HTTP access log of 1995-08-01 "
       "loaded through CQL in three key designs, replication factor "
    << r.replication_factor << ", etcd at <code>" << Html(r.etcd) << "</code>. Balancer: " << Html(r.balancer)
    << ".</p>\n";
  for (const auto& t : r.tables) {
    uint64_t writes = 0, reads = 0;
    for (const auto& n : t.nodes) writes += n.writes, reads += n.reads;
    h << "<h2><code>" << Html(t.name) << "</code></h2>\n<p>" << Html(t.design) << "</p><p><code>"
      << Html(t.create_cql) << "</code></p>\n<p>" << t.loaded << " rows loaded in " << t.load_seconds << " s, "
      << t.rejected << " rejected, count(*) " << t.counted << ", " << t.tablets << " tablets. At each moment the "
      << "busiest node served " << Percent(t.busiest_node_write_share) << " of the writes (one node at least 90% "
      << "in " << Percent(t.one_node_sample_share) << " of the samples); "
      << t.nodes_serving_writes << " of " << t.nodes.size() << " nodes served at least 10% of them.</p>\n";
    h << "<table><tr><th>node</th><th class=\"num\">writes served</th><th class=\"num\">reads served</th>"
         "<th class=\"num\">tablets held</th><th>writes over time</th></tr>\n";
    const auto columns = Columns(t);
    for (size_t k = 0; k < t.nodes.size(); ++k) {
      const auto& n = t.nodes[k];
      h << "<tr><td>" << n.node << " (" << Html(n.address) << ")</td><td class=\"num\">" << n.writes << " ("
        << Percent(Share(n.writes, writes)) << ")</td><td class=\"num\">" << n.reads << " ("
        << Percent(Share(n.reads, reads)) << ")</td><td class=\"num\">" << n.tablets
        << "</td><td><table class=\"strip\"><tr>";
      for (const auto& col : columns) {
        const double s = Share(col[k], Sum(col));
        h << "<td style=\"background:" << HeatColour(s) << "\" title=\"" << Percent(s) << "\"></td>";
      }
      h << "</tr></table></td></tr>\n";
    }
    h << "</table>\n<p>Read phase: " << t.read_queries << " queries, <code>" << Html(t.read_query) << "</code></p>\n";
  }
  h << "<h2>Tablet events</h2><table><tr><th>table</th><th>event</th><th>decided on</th><th>reason</th></tr>\n";
  for (const auto& e : r.tablet_events) {
    h << "<tr><td><code>" << Html(e.table) << "</code></td><td>" << Html(e.kind) << "</td><td>" << Html(e.subject)
      << "</td><td>" << Html(e.detail) << "</td></tr>\n";
  }
  h << "</table>\n<h2>The seeds' queries</h2>\n" << QueriesHtml(r.queries, 10) << "</body></html>\n";
  return h.str();
}

}  // namespace tessera::demo
