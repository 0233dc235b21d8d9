// Pieces the demo's reports share (demo/report.h on one node,
// demo/cluster_report.h on a cluster): HTML escaping, percentages, the heat
// colour scale, and the seeds' queries rendered as text, JSON and HTML.
//
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "demo/report.h"

namespace tessera::demo {

// `s` with <, >, & and " escaped for HTML text and attribute values.
std::string Html(const std::string& s);
// A page's start up to <body>: the reports' shared style, then `css`.
std::string HtmlHead(const std::string& title, const std::string& css);
// A share in [0, 1] as "12.3%".
std::string Percent(double share);
// White (0) to deep red (1) as "#rrggbb"; x is clamped to [0, 1].
std::string HeatColour(double x);

// Each query's title, timing and CQL, and its first `rows` rows.
std::string QueriesText(const std::vector<QueryReport>& queries, size_t rows);
nlohmann::json QueriesJson(const std::vector<QueryReport>& queries);
std::string QueriesHtml(const std::vector<QueryReport>& queries, size_t rows);

}  // namespace tessera::demo
