#include "server/metrics_text.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "db/database.h"
#include "storage/merge_operator.h"
#include "storage/storage_engine.h"

namespace tessera::server {
namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Integral values (counters, gauges of counts) exactly: "%.6g" would print a
// counter past a million as 1.23457e+06 and lose its last digits.
std::string Number(double v) {
  char buf[32];
  const bool integral = v == std::floor(v) && std::fabs(v) < 9e15;
  std::snprintf(buf, sizeof buf, integral ? "%.0f" : "%.6g", v);
  return buf;
}

// Collects samples per metric so that each metric's HELP and TYPE come once.
class Exposition {
 public:
  void Add(const std::string& name, const char* type, const char* help, const std::string& labels, double value) {
    Metric& m = metrics_[name];
    m.type = type;
    m.help = help;
    m.lines += name + (labels.empty() ? "" : "{" + labels + "}") + " " + Number(value) + "\n";
  }
  void Histogram(const std::string& name, const char* help, const std::string& labels, const LatencyHistogram& h) {
    Metric& m = metrics_[name];
    m.type = "histogram";
    m.help = help;
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= LatencyHistogram::kBoundsMicros.size(); ++i) {
      cumulative += h.Count(i);
      std::string le = i < LatencyHistogram::kBoundsMicros.size()
                           ? Number(static_cast<double>(LatencyHistogram::kBoundsMicros[i]) / 1e6)
                           : "+Inf";
      m.lines += name + "_bucket{" + (labels.empty() ? "" : labels + ",") + "le=\"" + le + "\"} " +
                 std::to_string(cumulative) + "\n";
    }
    const std::string braced = labels.empty() ? "" : "{" + labels + "}";
    m.lines += name + "_sum" + braced + " " + Number(static_cast<double>(h.SumMicros()) / 1e6) + "\n";
    m.lines += name + "_count" + braced + " " + std::to_string(cumulative) + "\n";
  }
  // A histogram of counts: `counts` per bucket (not cumulative), the last
  // one above every bound; `sum` the total of the observed values.
  template <size_t N>
  void Histogram(const std::string& name, const char* help, const uint64_t (&bounds)[N],
                 const std::vector<uint64_t>& counts, uint64_t sum) {
    Metric& m = metrics_[name];
    m.type = "histogram";
    m.help = help;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      cumulative += counts[i];
      const std::string le = i < N ? std::to_string(bounds[i]) : "+Inf";
      m.lines += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    m.lines += name + "_sum " + std::to_string(sum) + "\n";
    m.lines += name + "_count " + std::to_string(cumulative) + "\n";
  }
  std::string Text() const {
    std::string out;
    for (const auto& [name, m] : metrics_) {
      out += "# HELP " + name + " " + m.help + "\n# TYPE " + name + " " + m.type + "\n" + m.lines;
    }
    return out;
  }

 private:
  struct Metric {
    std::string type, help, lines;
  };
  std::map<std::string, Metric> metrics_;
};

// The storage engine's compaction debt, memtables, logs and merge-operand chains (issue 32).
void AddStorageMetrics(const StorageStats& st, Exposition* x) {
  auto gauge = [&](const char* name, const char* help, uint64_t v) {
    x->Add(name, "gauge", help, "", static_cast<double>(v));
  };
  gauge("tessera_storage_pending_compaction_bytes", "Compaction debt: bytes RocksDB estimates it must rewrite.",
        st.pending_compaction_bytes);
  gauge("tessera_storage_running_compactions", "Compactions running now.", st.running_compactions);
  gauge("tessera_storage_level0_files", "SST files in level 0 (each one a read may visit).", st.level0_files);
  gauge("tessera_storage_memtable_bytes", "Bytes in the data column family's memtables.", st.memtable_bytes);
  gauge("tessera_storage_immutable_memtables", "Memtables waiting for a flush.", st.immutable_memtables);
  gauge("tessera_storage_wal_files", "Live write-ahead log files.", st.wal_files);
  gauge("tessera_storage_wal_bytes", "Bytes of the live write-ahead log files.", st.wal_bytes);
  x->Add("tessera_storage_wal_syncs_total", "counter", "fsyncs of the write-ahead logs since the node started.", "",
         static_cast<double>(st.wal_syncs));
  x->Add("tessera_storage_commitlog_sync", "gauge",
         "1 for the durability mode (commitlog_sync: periodic, batch or group).",
         std::string("mode=\"") + st.commitlog_sync + "\"", 1);
  gauge("tessera_storage_block_cache_capacity_bytes", "Block cache capacity.", st.block_cache_capacity_bytes);
  gauge("tessera_storage_block_cache_usage_bytes", "Bytes the block cache holds.", st.block_cache_usage_bytes);
  auto counter = [&](const char* name, const char* help, const std::string& labels, uint64_t v) {
    x->Add(name, "counter", help, labels, static_cast<double>(v));
  };
  const char* hits = "Block cache lookups that found the block, by block kind.";
  const char* misses = "Block cache lookups that read the block from its file, by block kind.";
  counter("tessera_storage_block_cache_hits_total", hits, "block=\"data\"", st.block_cache_data_hits);
  counter("tessera_storage_block_cache_hits_total", hits, "block=\"index\"", st.block_cache_index_hits);
  counter("tessera_storage_block_cache_hits_total", hits, "block=\"filter\"", st.block_cache_filter_hits);
  counter("tessera_storage_block_cache_misses_total", misses, "block=\"data\"", st.block_cache_data_misses);
  counter("tessera_storage_block_cache_misses_total", misses, "block=\"index\"", st.block_cache_index_misses);
  counter("tessera_storage_block_cache_misses_total", misses, "block=\"filter\"", st.block_cache_filter_misses);
  const char* bloom =
      "Bloom filter probes: whole keys answered absent (useful), maybe (positive) and truly present "
      "(true_positive); partition prefixes checked and answered absent (prefix_checked, prefix_useful).";
  counter("tessera_storage_bloom_filter_total", bloom, "outcome=\"useful\"", st.bloom_useful);
  counter("tessera_storage_bloom_filter_total", bloom, "outcome=\"positive\"", st.bloom_positive);
  counter("tessera_storage_bloom_filter_total", bloom, "outcome=\"true_positive\"", st.bloom_true_positive);
  counter("tessera_storage_bloom_filter_total", bloom, "outcome=\"prefix_checked\"", st.prefix_checked);
  counter("tessera_storage_bloom_filter_total", bloom, "outcome=\"prefix_useful\"", st.prefix_useful);
  x->Histogram("tessera_storage_merge_operands", "Merge operands folded per full merge (reads, flushes, compactions).",
               MergeOperandStats::kBucketBounds, st.full_merges_by_operands, st.merge_operands);
}

}  // namespace

std::string RenderFrontDoorMetrics(const LatencyHistogram& request_latency) {
  Exposition x;
  x.Histogram("tessera_cql_request_latency_seconds",
              "CQL requests from the read of their frame to the write of their reply (the front door's view).", "",
              request_latency);
  return x.Text();
}

std::string RenderMetrics(Database& db) {
  Exposition x;
  std::map<uint32_t, size_t> large;
  for (const auto& m : db.large_partitions().All()) ++large[m.table_id];
  const auto tables = db.catalog().AllTables();
  x.Add("tessera_tables", "gauge", "Tables in the catalog.", "", static_cast<double>(tables.size()));
  x.Add("tessera_tombstone_purge_held_ranges", "gauge",
        "Key ranges whose tombstones compaction keeps past gc_grace (tablets in transition).", "",
        static_cast<double>(db.engine()->registry().held_ranges()));
  AddStorageMetrics(db.engine()->Stats(), &x);
  for (const auto& table : tables) {
    const std::string tl = "keyspace=\"" + Escape(table->keyspace) + "\",table=\"" + Escape(table->name) + "\"";
    const auto tablets = db.Tablets(*table);
    x.Add("tessera_table_tablets", "gauge", "Tablets of the table.", tl, static_cast<double>(tablets.size()));
    x.Add("tessera_table_large_partitions", "gauge", "Partitions at or above half a partition warn threshold.", tl,
          static_cast<double>(large[table->id]));
    auto metrics = db.MetricsOf(table->id);
    x.Add("tessera_table_splits_total", "counter", "Tablet splits since the server started.", tl,
          static_cast<double>(metrics->splits.load()));
    x.Add("tessera_table_merges_total", "counter", "Tablet merges since the server started.", tl,
          static_cast<double>(metrics->merges.load()));
    x.Add("tessera_table_replica_reads_total", "counter",
          "Read requests this node served as a replica of the table (cluster mode; 0 on a single node).", tl,
          static_cast<double>(metrics->replica_reads.load()));
    x.Add("tessera_table_replica_writes_total", "counter",
          "Write requests this node served as a replica of the table (cluster mode; 0 on a single node).", tl,
          static_cast<double>(metrics->replica_writes.load()));
    x.Histogram("tessera_table_read_latency_seconds", "Database read latency (point, slice and range reads).", tl,
                metrics->read_latency);
    x.Histogram("tessera_table_write_latency_seconds", "Database write latency (one batch of mutations).", tl,
                metrics->write_latency);
    for (const auto& s : tablets) {
      const std::string l = tl + ",tablet=\"" + std::to_string(s.id) + "\"";
      x.Add("tessera_tablet_reads_total", "counter", "Rows returned by reads of the tablet.", l,
            static_cast<double>(s.reads));
      x.Add("tessera_tablet_writes_total", "counter", "Row writes to the tablet.", l, static_cast<double>(s.writes));
      x.Add("tessera_tablet_read_bytes_total", "counter", "Stored bytes read from the tablet.", l,
            static_cast<double>(s.bytes_read));
      x.Add("tessera_tablet_written_bytes_total", "counter", "Stored bytes written to the tablet.", l,
            static_cast<double>(s.bytes_written));
      x.Add("tessera_tablet_size_bytes", "gauge", "Approximate stored size of the tablet.", l,
            static_cast<double>(s.size_bytes));
      x.Add("tessera_tablet_rows_estimate", "gauge", "Estimated stored rows of the tablet.", l,
            static_cast<double>(s.rows_estimate));
      x.Add("tessera_tablet_reads_per_second", "gauge", "Rows read per second over the last 10 s.", l,
            s.reads_per_second);
      x.Add("tessera_tablet_writes_per_second", "gauge", "Rows written per second over the last 10 s.", l,
            s.writes_per_second);
      x.Add("tessera_tablet_hot", "gauge", "1 when the tablet's load is above the split threshold.", l,
            s.state == "normal" ? 0 : 1);
    }
  }
  return x.Text();
}

}  // namespace tessera::server
