#include "workload/workload.h"

#include <algorithm>
#include <map>

#include "common/bytes.h"

namespace tessera::workload {
namespace {

struct Preset {
  double read, update, insert, scan, rmw;
  const char* distribution;
  int max_scan;
};

const std::map<std::string, Preset>& Presets() {
  static const std::map<std::string, Preset> kPresets = {
      {"a", {0.5, 0.5, 0, 0, 0, "zipfian", 1000}},   {"b", {0.95, 0.05, 0, 0, 0, "zipfian", 1000}},
      {"c", {1, 0, 0, 0, 0, "zipfian", 1000}},       {"d", {0.95, 0, 0.05, 0, 0, "latest", 1000}},
      {"e", {0, 0, 0.05, 0.95, 0, "zipfian", 100}},  {"f", {0.5, 0, 0, 0, 0.5, "zipfian", 1000}},
      // The seeds' scenarios and the side-by-side pair.
      {"monotonic", {0, 0, 1, 0, 0, "uniform", 0}},  {"swapped", {0, 0, 1, 0, 0, "uniform", 0}},
      {"timeseries", {0, 0, 1, 0, 0, "uniform", 0}}, {"latest-n", {1, 0, 0, 0, 0, "uniform", 0}},
      {"point-read", {1, 0, 0, 0, 0, "uniform", 0}}, {"write", {0, 0, 1, 0, 0, "uniform", 0}},
      // Lightweight transactions on the same table (issue 30's benchmark).
      {"lwt-insert", {0, 0, 1, 0, 0, "uniform", 0}}, {"lwt-update", {0, 1, 0, 0, 0, "uniform", 0}},
      // Counter increments (issue 30's counters across replicas).
      {"counter", {0, 1, 0, 0, 0, "uniform", 0}},
  };
  return kPresets;
}

cql::WireValue Bigint(int64_t v) {
  std::string b;
  PutBigEndian64(&b, static_cast<uint64_t>(v));
  return cql::WireValue::Of(std::move(b));
}

cql::WireValue Int(int32_t v) {
  std::string b;
  PutBigEndian32(&b, static_cast<uint32_t>(v));
  return cql::WireValue::Of(std::move(b));
}

cql::WireValue Text(std::string s) { return cql::WireValue::Of(std::move(s)); }

std::string UserKey(int64_t n) { return "user" + std::to_string(FnvHash64(n)); }

}  // namespace

const char* OpName(OpKind k) {
  switch (k) {
    case OpKind::kRead: return "READ";
    case OpKind::kUpdate: return "UPDATE";
    case OpKind::kInsert: return "INSERT";
    case OpKind::kScan: return "SCAN";
    case OpKind::kReadModifyWrite: return "READ-MODIFY-WRITE";
  }
  return "?";
}

Result<std::shared_ptr<const Workload>> Workload::Create(const WorkloadOptions& o) {
  auto preset = Presets().find(o.name);
  if (preset == Presets().end()) {
    return Status::InvalidArgument("unknown workload '" + o.name +
                                   "' (a-f, monotonic, swapped, timeseries, latest-n, point-read, write, lwt-insert, lwt-update, counter)");
  }
  std::shared_ptr<Workload> w(new Workload());
  w->o_ = o;
  const Preset& p = preset->second;
  auto pick = [](double v, double preset_value) { return v >= 0 ? v : preset_value; };
  w->mix_ = {{OpKind::kRead, pick(o.read, p.read)},
             {OpKind::kUpdate, pick(o.update, p.update)},
             {OpKind::kInsert, pick(o.insert, p.insert)},
             {OpKind::kScan, pick(o.scan, p.scan)},
             {OpKind::kReadModifyWrite, pick(o.read_modify_write, p.rmw)}};
  double total = 0;
  for (const auto& [k, v] : w->mix_) total += v;
  if (total <= 0) return Status::InvalidArgument("the operation proportions add up to zero");
  for (auto& [k, v] : w->mix_) v /= total;
  w->distribution_ = o.distribution.empty() ? p.distribution : o.distribution;
  if (w->distribution_ != "zipfian" && w->distribution_ != "uniform" && w->distribution_ != "latest") {
    return Status::InvalidArgument("unknown request distribution '" + w->distribution_ + "'");
  }
  w->max_scan_ = o.max_scan_length > 0 ? o.max_scan_length : p.max_scan;
  const std::string ks = "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
                         "{'class': 'SimpleStrategy', 'replication_factor': " +
                         std::to_string(o.replication_factor) + "}";
  auto keyspace = [&](const std::string& name) {
    std::string s = ks;
    s.replace(s.find("%s"), 2, name);
    return s;
  };
  if (o.name.size() == 1) {  // YCSB
    std::string cols, fields, marks;
    for (int i = 0; i < o.field_count; ++i) {
      cols += ", field" + std::to_string(i) + " text";
      fields += ", field" + std::to_string(i);
      marks += ", ?";
    }
    w->ddl_ = {keyspace("ycsb"), "CREATE TABLE IF NOT EXISTS ycsb.usertable (y_id text PRIMARY KEY" + cols + ")"};
    w->statements_ = {"INSERT INTO ycsb.usertable (y_id" + fields + ") VALUES (?" + marks + ")",
                      "SELECT * FROM ycsb.usertable WHERE y_id = ?",
                      "SELECT * FROM ycsb.usertable WHERE token(y_id) >= token(?) LIMIT ?"};
    for (int i = 0; i < o.field_count; ++i) {
      w->statements_.push_back("UPDATE ycsb.usertable SET field" + std::to_string(i) + " = ? WHERE y_id = ?");
    }
    return std::shared_ptr<const Workload>(std::move(w));
  }
  w->ycsb_ = false;
  w->ddl_ = {keyspace("bench")};
  if (o.name == "monotonic") {
    w->ddl_.push_back("CREATE TABLE IF NOT EXISTS bench.events_by_time (ts bigint, source int, v blob, "
                      "PRIMARY KEY (ts, source)) WITH distribution = 'range'");
    w->statements_ = {"INSERT INTO bench.events_by_time (ts, source, v) VALUES (?, ?, ?)"};
  } else if (o.name == "swapped") {
    w->ddl_.push_back("CREATE TABLE IF NOT EXISTS bench.events_by_source (source int, ts bigint, v blob, "
                      "PRIMARY KEY (source, ts)) WITH distribution = 'range'");
    w->statements_ = {"INSERT INTO bench.events_by_source (source, ts, v) VALUES (?, ?, ?)"};
  } else if (o.name == "timeseries" || o.name == "latest-n") {
    w->ddl_.push_back("CREATE TABLE IF NOT EXISTS bench.series (metric text, host text, ts bigint, value blob, "
                      "PRIMARY KEY ((metric, host), ts)) WITH CLUSTERING ORDER BY (ts DESC)");
    w->statements_ = {"INSERT INTO bench.series (metric, host, ts, value) VALUES (?, ?, ?, ?)",
                      "SELECT ts, value FROM bench.series WHERE metric = ? AND host = ? LIMIT 10"};
  } else if (o.name == "counter") {
    w->ddl_.push_back("CREATE TABLE IF NOT EXISTS bench.counters (p bigint PRIMARY KEY, n counter)");
    w->statements_ = {"UPDATE bench.counters SET n = n + ? WHERE p = ?"};
  } else {  // point-read, write, lwt-insert, lwt-update
    w->ddl_.push_back("CREATE TABLE IF NOT EXISTS bench.kv (p bigint, c int, v blob, PRIMARY KEY (p, c))");
    w->statements_ = {"INSERT INTO bench.kv (p, c, v) VALUES (?, ?, ?)",
                      "SELECT v FROM bench.kv WHERE p = ? AND c = ?",
                      "INSERT INTO bench.kv (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS",
                      "UPDATE bench.kv SET v = ? WHERE p = ? AND c = ? IF EXISTS"};
  }
  return std::shared_ptr<const Workload>(std::move(w));
}

cql::WireValue Workload::RandomText(std::mt19937_64& rng, int bytes) {
  std::string s(static_cast<size_t>(bytes), ' ');
  for (size_t i = 0; i < s.size(); i += 8) {
    uint64_t r = rng();
    for (size_t j = i; j < std::min(s.size(), i + 8); ++j, r >>= 8) s[j] = static_cast<char>(' ' + (r & 63));
  }
  return cql::WireValue::Of(std::move(s));
}

Chooser Workload::NewChooser(uint64_t seed, InsertCounter* inserts) const {
  Chooser c;
  c.rng.seed(seed);
  c.inserts = inserts;
  const int64_t expected_new = static_cast<int64_t>(static_cast<double>(o_.record_count) * 2.0);
  c.zipfian = std::make_unique<ScrambledZipfian>(0, std::max<int64_t>(1, o_.record_count + expected_new) - 1);
  c.latest = std::make_unique<SkewedLatest>(inserts);
  return c;
}

int64_t Workload::ChooseKey(Chooser& c) const {
  const int64_t last = std::max<int64_t>(0, c.inserts->last());
  for (int attempt = 0; attempt < 100; ++attempt) {
    int64_t k = 0;
    if (distribution_ == "latest") {
      k = c.latest->Next(c.rng);
    } else if (distribution_ == "zipfian") {
      k = c.zipfian->Next(c.rng);
    } else {
      k = static_cast<int64_t>(c.rng() % static_cast<uint64_t>(last + 1));
    }
    if (k <= last) return k;  // only keys already inserted (YCSB's nextKeynum)
  }
  return static_cast<int64_t>(c.rng() % static_cast<uint64_t>(last + 1));
}

Op Workload::Insert(int64_t n, std::mt19937_64& rng) const {
  Op op;
  op.kind = OpKind::kInsert;
  op.statement = 0;
  const std::string& name = o_.name;
  if (ycsb_) {
    op.values.push_back(Text(UserKey(n)));
    for (int i = 0; i < o_.field_count; ++i) op.values.push_back(RandomText(rng, o_.field_length));
  } else if (name == "monotonic") {
    op.values = {Bigint(n), Int(static_cast<int32_t>(rng() % 1000)), RandomText(rng, o_.value_bytes)};
  } else if (name == "swapped") {
    op.values = {Int(static_cast<int32_t>(rng() % 1000)), Bigint(n), RandomText(rng, o_.value_bytes)};
  } else if (name == "timeseries" || name == "latest-n") {
    const int64_t series = n % o_.series;
    op.values = {Text("cpu"), Text("host" + std::to_string(series)), Bigint(n / o_.series),
                 RandomText(rng, std::min(o_.value_bytes, 64))};
  } else {
    op.values = {Bigint(n), Int(0), RandomText(rng, o_.value_bytes)};
  }
  return op;
}

Op Workload::LoadOp(int64_t n, std::mt19937_64& rng) const { return Insert(n, rng); }

Op Workload::NextOp(Chooser& c) const {
  std::uniform_real_distribution<double> u(0, 1);
  double x = u(c.rng);
  OpKind kind = mix_.back().first;
  for (const auto& [k, share] : mix_) {
    if (x < share) {
      kind = k;
      break;
    }
    x -= share;
  }
  if (kind == OpKind::kInsert && o_.name == "write") {  // upserts at random keys, as db_bench fillrandom
    return Insert(static_cast<int64_t>(c.rng() % static_cast<uint64_t>(std::max<int64_t>(1, o_.record_count))), c.rng);
  }
  if (kind == OpKind::kInsert && o_.name == "lwt-insert") {  // a new key each: always applied
    Op op = Insert(c.inserts->Take(), c.rng);
    op.statement = 2;
    return op;
  }
  if (kind == OpKind::kInsert) return Insert(c.inserts->Take(), c.rng);
  if (o_.name == "counter") {  // +1 to one of record_count counters, at random (no load needed)
    Op op;
    op.kind = OpKind::kUpdate;
    op.statement = 0;
    op.values = {Bigint(1), Bigint(static_cast<int64_t>(c.rng() % static_cast<uint64_t>(std::max<int64_t>(1, o_.record_count))))};
    return op;
  }
  const int64_t key = ChooseKey(c);
  Op op;
  op.kind = kind;
  if (!ycsb_) {
    if (o_.name == "lwt-update") {  // a loaded key: applied, after the read Paxos makes
      op.statement = 3;
      op.values = {RandomText(c.rng, o_.value_bytes), Bigint(key), Int(0)};
      op.kind = OpKind::kUpdate;
      return op;
    }
    if (o_.name == "latest-n") {
      op.statement = 1;
      op.values = {Text("cpu"), Text("host" + std::to_string(key % o_.series))};
    } else {  // point-read
      op.statement = 1;
      op.values = {Bigint(key), Int(0)};
    }
    op.kind = OpKind::kRead;
    return op;
  }
  switch (kind) {
    case OpKind::kRead:
      op.statement = 1;
      op.values = {Text(UserKey(key))};
      break;
    case OpKind::kScan: {
      op.statement = 2;
      const int32_t length = 1 + static_cast<int32_t>(c.rng() % static_cast<uint64_t>(max_scan_));
      op.values = {Text(UserKey(key)), Int(length)};
      break;
    }
    case OpKind::kUpdate:
    case OpKind::kReadModifyWrite: {
      const int field = static_cast<int>(c.rng() % static_cast<uint64_t>(o_.field_count));
      std::vector<cql::WireValue> update = {RandomText(c.rng, o_.field_length), Text(UserKey(key))};
      if (kind == OpKind::kUpdate) {
        op.statement = 3 + static_cast<size_t>(field);
        op.values = std::move(update);
      } else {
        op.statement = 1;
        op.values = {Text(UserKey(key))};
        op.then_statement = 3 + static_cast<size_t>(field);
        op.then_values = std::move(update);
      }
      break;
    }
    case OpKind::kInsert:
      break;
  }
  return op;
}

std::string Workload::Describe() const {
  std::string s = "workload " + o_.name + ": ";
  for (const auto& [k, v] : mix_) {
    if (v > 0) s += std::string(OpName(k)) + " " + std::to_string(static_cast<int>(v * 100 + 0.5)) + "% ";
  }
  s += "| " + distribution_ + " | records " + std::to_string(o_.record_count);
  if (ycsb_) {
    s += " | " + std::to_string(o_.field_count) + " fields of " + std::to_string(o_.field_length) + " bytes";
  } else {
    s += " | values of " + std::to_string(o_.value_bytes) + " bytes";
  }
  return s;
}

}  // namespace tessera::workload
