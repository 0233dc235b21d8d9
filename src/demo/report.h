// The demo's report: what was loaded, how the writes spread over tablets,
// the seeds' queries with their answers, and what the tablet layer detected
// (hot partitions, holds, key advice) — as text for the terminal, JSON for
// tests, and a self-contained HTML page (inline SVG heatmaps, no scripts).
//
// Thread safety: pure functions over a finished report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/key_advice.h"
#include "demo/tablet_timeline.h"

namespace tessera::demo {

struct TableReport {
  std::string name;          // keyspace.table
  std::string design;        // one line: the key design and why
  std::string create_cql;
  std::string source_file;
  uint64_t file_rows = 0;    // records read from the file
  uint64_t loaded = 0;       // acknowledged
  uint64_t rejected = 0;
  uint64_t counted = 0;      // SELECT count(*) afterwards
  double load_seconds = 0;
  size_t tablets = 0;        // at the end
  WriteDistribution distribution;
  std::vector<TimelineSample> timeline;
  // buckets = 'auto' tables: when the balancer raised the bucket count (seconds into the
  // load; negative: never), why, and the spread of the writes after it.
  double bucket_raise_seconds = -1;
  std::string bucket_raise;
  WriteDistribution after_raise;
};

struct QueryReport {
  std::string title, cql;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // formatted cells
  double millis = 0;
};

struct DetectionRow {
  std::string table, kind, subject, detail;
};

struct DemoReport {
  std::vector<TableReport> tables;
  std::vector<QueryReport> queries;
  std::vector<DetectionRow> hot_partitions;  // kind: writes / reads
  std::vector<DetectionRow> tablet_events;   // kind: split / merge / hold
  std::vector<KeyAdvice> key_advice;
  std::string balancer;                      // the thresholds the demo ran with
  std::string keyviz_url;                    // the live Key Visualizer; empty without an admin port
  std::string time_order;                    // the bucketed table's time-range query against the unbucketed one
};

std::string RenderText(const DemoReport& r);
std::string RenderJson(const DemoReport& r);
std::string RenderHtml(const DemoReport& r);

}  // namespace tessera::demo
