// KeyVizSampler: samples every table's tablets from Database into a
// KeyVizHistory, one column per `column_micros`, on a thread of its own. It
// serves the history as the Key Visualizer's JSON (keyviz/keyviz_json.h).
//
// Cost per sample: one Database::Tablets call per table (counters and
// RocksDB size estimates), so one sample per second is cheap and the default
// is one per minute.
//
// Thread safety: every method is thread-safe. Start/Stop from one thread.
// Stop is explicit, and the destructor calls it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "keyviz/history.h"

namespace tessera {
class Database;
}

namespace tessera::keyviz {

class KeyVizSampler {
 public:
  // REQUIRES: db outlives the sampler. `node` names this node in the JSON
  // (its CQL address).
  KeyVizSampler(Database* db, KeyVizOptions options, std::string node);
  ~KeyVizSampler();

  // Starts the thread: a baseline sample, then one sample per column.
  void Start();
  // Stops and joins the thread. Idempotent.
  void Stop();
  // Takes one sample on the calling thread.
  void SampleNow();

  // The JSON of keyviz/keyviz_json.h for the tables whose "keyspace.table"
  // equals `table` (empty: every table), with at most `last_columns` of the
  // newest columns (0: all).
  std::string Json(const std::string& table, size_t last_columns);

 private:
  Database* db_;
  const KeyVizOptions options_;
  const std::string node_;
  std::mutex sample_mu_;       // serialises samples
  uint64_t retired_sequence_ = 0;  // the last retired tablet passed on; guarded by sample_mu_
  std::mutex mu_;              // guards history_
  KeyVizHistory history_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::keyviz
