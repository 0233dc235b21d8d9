// The Key Visualizer page served at /keyvisualizer: one self-contained HTML
// document (inline CSS and script, no external requests). It fetches
// /keyvisualizer/data.json (keyviz/keyviz_json.h), draws each table's
// heatmap on a canvas with splits, merges, moves and holds marked, names the
// pattern beside it with advice and DDL, and refreshes every 5 s (`?refresh=`
// seconds). When a render finishes it sets the body's data-ready to "1", which
// the browser tests wait for. The source is keyviz_page.html, embedded at
// build time.
//
// Thread safety: returns a constant.
#pragma once

namespace tessera::keyviz {

const char* KeyVizPageHtml();

}  // namespace tessera::keyviz
