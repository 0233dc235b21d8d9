#include "keyviz/sampler.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "common/bytes.h"
#include "db/database.h"
#include "keys/storage_key.h"
#include "keyviz/keyviz_json.h"
#include "types/value_literal.h"

namespace tessera::keyviz {
namespace {

// How a tablet's start bound reads: the partition key it starts at (range
// tables, and hash tables split at a partition), or its first token.
std::string Label(const TableSchema& table, const std::string& start) {
  if (start.size() <= 4) return "(start)";
  if (table.distribution == Distribution::kHash && start.size() == 12) {
    return "token " + std::to_string(DecodeToken(std::string_view(start).substr(4)));
  }
  auto pk = DecodePartitionPosition(table, start);
  if (pk.ok()) return PartitionKeyLiteral(table, *pk);
  return "0x" + ToHex(std::string_view(start).substr(4, 16));
}

uint64_t Calls(const LatencyHistogram& h) {
  uint64_t n = 0;
  for (size_t i = 0; i <= LatencyHistogram::kBoundsMicros.size(); ++i) n += h.Count(i);
  return n;
}

// A bound without the table's 4-byte id; empty when it is the table's end.
std::string WithinTable(uint32_t table_id, const std::string& bound) {
  const std::string prefix = TablePrefix(table_id);
  return bound.compare(0, prefix.size(), prefix) == 0 ? bound.substr(prefix.size()) : std::string();
}

// The retired tablets first, then the live ones: a tablet replaced in between
// is listed by neither now and comes with the next sample's retired.
std::vector<TableCounterSample> Collect(Database& db, uint64_t* retired_sequence) {
  std::map<uint32_t, std::vector<RetiredTabletSample>> retired;
  for (const auto& r : db.RetiredTablets(*retired_sequence)) {
    *retired_sequence = std::max(*retired_sequence, r.sequence);
    retired[r.table_id].push_back({r.id, WithinTable(r.table_id, r.start), WithinTable(r.table_id, r.end), r.reads,
                                   r.writes, r.bytes_read, r.bytes_written});
  }
  std::vector<TableCounterSample> out;
  for (const auto& table : db.catalog().AllTables()) {
    TableCounterSample t;
    t.table_id = table->id;
    auto metrics = db.MetricsOf(table->id);
    t.read_ops = Calls(metrics->read_latency);
    t.write_ops = Calls(metrics->write_latency);
    t.latency_sum_micros = metrics->read_latency.SumMicros() + metrics->write_latency.SumMicros();
    for (const auto& s : db.Tablets(*table)) {
      TabletCounterSample c;
      c.tablet = s.id;
      c.start = WithinTable(table->id, s.start);
      c.label = Label(*table, s.start);
      c.reads = s.reads;
      c.writes = s.writes;
      c.bytes_read = s.bytes_read;
      c.bytes_written = s.bytes_written;
      t.tablets.push_back(std::move(c));
    }
    if (auto r = retired.find(table->id); r != retired.end()) t.retired = std::move(r->second);
    if (!t.tablets.empty()) out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

KeyVizSampler::KeyVizSampler(Database* db, KeyVizOptions options, std::string node)
    : db_(db), options_(options), node_(std::move(node)), history_(options) {}

KeyVizSampler::~KeyVizSampler() { Stop(); }

void KeyVizSampler::SampleNow() {
  std::lock_guard<std::mutex> sampling(sample_mu_);  // one sample at a time: retired tablets go to one column
  auto tables = Collect(*db_, &retired_sequence_);
  const int64_t now = db_->NowMicros();
  std::lock_guard<std::mutex> lock(mu_);
  history_.AddSample(now, tables);
}

void KeyVizSampler::Start() {
  thread_ = std::thread([this] {
    SampleNow();  // the baseline, off the caller's (the node's start-up) thread
    std::unique_lock<std::mutex> lock(stop_mu_);
    while (!stop_cv_.wait_for(lock, std::chrono::microseconds(options_.column_micros), [this] { return stopping_; })) {
      lock.unlock();
      SampleNow();
      lock.lock();
    }
  });
}

void KeyVizSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string KeyVizSampler::Json(const std::string& table, size_t last_columns) {
  std::lock_guard<std::mutex> lock(mu_);
  return RenderKeyVizJson(*db_, history_, {node_, table, last_columns});
}

}  // namespace tessera::keyviz
