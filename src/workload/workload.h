// Workloads of `tessera bench`: YCSB's core workloads A-F (CoreWorkload's
// properties and presets, over CQL as YCSB's Cassandra binding issues them)
// and the seeds' scenarios, each as DDL, prepared statements and an
// operation chooser. The runner (runner.h) executes them.
//
// YCSB presets (workloads/workload[a-f]): A 50% read / 50% update, B 95/5,
// C 100% read, all zipfian; D 95% read / 5% insert, latest; E 95% scan
// (1..100 rows) / 5% insert, zipfian; F 50% read / 50% read-modify-write.
// Table ycsb.usertable (y_id text PRIMARY KEY, field0..field<n-1> text);
// keys "user" + FnvHash64(n) (insertorder=hashed).
//
// Seeds' scenarios (bench.*): monotonic (inserts keyed by an increasing
// timestamp first, range table), swapped (the same rows keyed by source
// first), timeseries (inserts into (metric, host) partitions in time order),
// latest-n (the newest 10 points of a random series), and the side-by-side
// pair point-read / write (1 KB rows, composite key (p, c)).
//
// Thread safety: a Workload is shared read-only; each worker thread has its
// own Chooser.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/protocol/wire.h"
#include "workload/generators.h"

namespace tessera::workload {

struct WorkloadOptions {
  std::string name = "a";            // a..f, monotonic, swapped, timeseries, latest-n, point-read, write, lwt-insert, lwt-update, counter
  int64_t record_count = 100000;     // rows loaded before the run (YCSB recordcount)
  int field_count = 10;              // YCSB fieldcount
  int field_length = 100;            // YCSB fieldlength (bytes)
  int value_bytes = 1000;            // point-read / write / seeds' scenarios
  std::string distribution;          // zipfian, uniform, latest; empty: the preset's
  // Proportions; negative: the preset's.
  double read = -1, update = -1, insert = -1, scan = -1, read_modify_write = -1;
  int max_scan_length = 0;           // 0: the preset's (YCSB default 1000; E 100)
  int series = 100;                  // timeseries / latest-n partitions
  int replication_factor = 1;        // of the keyspaces the workload creates (SimpleStrategy)
};

enum class OpKind { kRead, kUpdate, kInsert, kScan, kReadModifyWrite };
const char* OpName(OpKind kind);

struct Op {
  OpKind kind = OpKind::kRead;
  size_t statement = 0;                 // index into Workload::statements()
  std::vector<cql::WireValue> values;
  // Read-modify-write: the update that follows the read.
  size_t then_statement = 0;
  std::vector<cql::WireValue> then_values;
};

// Per-thread key generators (generators keep state).
struct Chooser {
  std::mt19937_64 rng;
  std::unique_ptr<ScrambledZipfian> zipfian;
  std::unique_ptr<SkewedLatest> latest;
  InsertCounter* inserts = nullptr;  // shared: numbers new records
};

class Workload {
 public:
  // Errors: InvalidArgument for an unknown name or bad proportions.
  static Result<std::shared_ptr<const Workload>> Create(const WorkloadOptions& options);

  const WorkloadOptions& options() const { return o_; }
  const std::vector<std::string>& ddl() const { return ddl_; }
  const std::vector<std::string>& statements() const { return statements_; }
  // Proportions after presets and overrides (read, update, insert, scan, rmw).
  std::vector<std::pair<OpKind, double>> mix() const { return mix_; }
  // The insert of record `n` for the load phase.
  Op LoadOp(int64_t n, std::mt19937_64& rng) const;
  // A chooser for one thread. REQUIRES: `inserts` outlives it; for the run
  // phase it starts at record_count.
  Chooser NewChooser(uint64_t seed, InsertCounter* inserts) const;
  // The next run-phase operation.
  Op NextOp(Chooser& chooser) const;
  // A human-readable summary of the parameters.
  std::string Describe() const;

 private:
  Workload() = default;
  static cql::WireValue RandomText(std::mt19937_64& rng, int bytes);
  int64_t ChooseKey(Chooser& c) const;
  Op Insert(int64_t n, std::mt19937_64& rng) const;

  WorkloadOptions o_;
  bool ycsb_ = true;
  std::vector<std::string> ddl_, statements_;
  std::vector<std::pair<OpKind, double>> mix_;
  std::string distribution_;
  int max_scan_ = 1000;
};

}  // namespace tessera::workload
