#include "cluster/node_load.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/etcd_client.h"
#include "cluster/replica_reads.h"
#include "common/bytes.h"
#include "common/thread_name.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {

std::string EncodeNodeLoad(const NodeLoad& load) {
  nlohmann::json tablets = nlohmann::json::array();
  for (const auto& t : load.tablet_loads) {
    nlohmann::json e = {{"table", t.table_uuid},
                        {"start", ToHex(t.start)},
                        {"reads", t.reads},
                        {"writes", t.writes},
                        {"bytes", t.bytes}};
    if (!t.sample.empty()) {
      nlohmann::json sample = nlohmann::json::array();
      for (const auto& [key, weight] : t.sample) sample.push_back({ToHex(key), weight});
      e["sample"] = std::move(sample);
      e["tail"] = {t.sampled_writes, t.advances, t.near_tail};
    }
    tablets.push_back(std::move(e));
  }
  return nlohmann::json{{"bytes", load.bytes},
                        {"tablets", load.tablets},
                        {"at_micros", load.at_micros},
                        {"replica_reads_per_second", load.replica_reads_per_second},
                        {"replica_writes_per_second", load.replica_writes_per_second},
                        {"tablet_loads", tablets}}
      .dump();
}

namespace {

// A non-negative number, or 0 when absent; false for anything else.
bool OptionalRate(const nlohmann::json& j, const char* field, double* out) {
  *out = 0;
  if (!j.contains(field)) return true;
  const auto& v = j[field];
  if (!v.is_number() || v.get<double>() < 0) return false;
  *out = v.get<double>();
  return true;
}

Status DecodeTabletLoads(const nlohmann::json& j, const std::string& text, std::vector<TabletLoadReport>* out) {
  if (!j.contains("tablet_loads")) return Status::OK();
  const auto& list = j["tablet_loads"];
  const Status bad = Status::Corruption("node load report: tablet_loads is not a list of tablet loads: " + text);
  if (!list.is_array()) return bad;
  for (const auto& e : list) {
    TabletLoadReport t;
    if (!e.is_object() || !e.contains("table") || !e["table"].is_string() || !e.contains("start") ||
        !e["start"].is_string() || !FromHex(e["start"].get<std::string>(), &t.start) ||
        !OptionalRate(e, "reads", &t.reads) || !OptionalRate(e, "writes", &t.writes)) {
      return bad;
    }
    if (e.contains("bytes")) {
      if (!e["bytes"].is_number_unsigned()) return bad;
      t.bytes = e["bytes"].get<uint64_t>();
    }
    if (e.contains("sample")) {
      if (!e["sample"].is_array()) return bad;
      for (const auto& k : e["sample"]) {
        std::string key;
        if (!k.is_array() || k.size() != 2 || !k[0].is_string() || !FromHex(k[0].get<std::string>(), &key) ||
            !k[1].is_number() || !(k[1].get<double>() >= 0)) {
          return bad;
        }
        t.sample.emplace_back(std::move(key), k[1].get<double>());
      }
    }
    if (e.contains("tail")) {
      const auto& tail = e["tail"];
      if (!tail.is_array() || tail.size() != 3) return bad;
      for (const auto& n : tail) {
        if (!n.is_number_unsigned()) return bad;
      }
      t.sampled_writes = tail[0].get<uint64_t>();
      t.advances = tail[1].get<uint64_t>();
      t.near_tail = tail[2].get<uint64_t>();
    }
    t.table_uuid = e["table"].get<std::string>();
    out->push_back(std::move(t));
  }
  return Status::OK();
}

}  // namespace

std::vector<std::pair<std::string, double>> CoarsenSample(const std::vector<std::pair<std::string, double>>& keys,
                                                          size_t max_keys) {
  std::vector<std::pair<std::string, double>> out;
  double total = 0;
  size_t weighted = 0;
  for (const auto& k : keys) {
    if (k.second > 0) total += k.second, ++weighted;
  }
  const size_t runs = std::max<size_t>(max_keys, 1);
  // The weight is cut into `runs` equal shares; a run holds the keys whose
  // weight before them falls in one share, so no run outweighs a share by
  // more than its last key, and a heavy key ends its run.
  double before = 0;  // the weight of the keys before the one at hand
  size_t run_share = 0;
  for (const auto& [key, weight] : keys) {
    if (weight <= 0) continue;
    const size_t share = std::min(runs - 1, static_cast<size_t>(before * static_cast<double>(runs) / total));
    if (weighted <= runs || out.empty() || share != run_share) {
      out.emplace_back(key, 0);
      run_share = share;
    }
    out.back().second += weight;
    before += weight;
  }
  return out;
}

KeySample::Snapshot ClusterKeySample(uint32_t table_id, const std::string& table_uuid_text, const TabletLoad& own,
                                     const std::string& self_host_text, const std::map<std::string, NodeLoad>& reports,
                                     size_t* nodes) {
  KeySample::Snapshot merged = own.sample;
  *nodes = own.sample.keys.empty() ? 0 : 1;
  for (const auto& [host, report] : reports) {
    if (host == self_host_text) continue;
    bool contributed = false;
    for (const TabletLoadReport& r : report.tablet_loads) {
      if (r.table_uuid != table_uuid_text) continue;
      bool inside = false;
      for (const auto& [relative, weight] : r.sample) {
        std::string key = AbsoluteKey(table_id, relative);
        if (key < own.start || (!own.end.empty() && key >= own.end)) continue;
        merged.keys.emplace_back(std::move(key), weight);
        inside = true;
      }
      if (inside) {
        merged.writes += r.sampled_writes;
        merged.advances += r.advances;
        merged.near_tail += r.near_tail;
      }
      contributed = contributed || inside;
    }
    *nodes += contributed;
  }
  std::sort(merged.keys.begin(), merged.keys.end());
  std::vector<std::pair<std::string, double>> unique;
  for (auto& k : merged.keys) {
    if (!unique.empty() && unique.back().first == k.first) {
      unique.back().second += k.second;
    } else {
      unique.push_back(std::move(k));
    }
  }
  merged.keys = std::move(unique);
  return merged;
}

Result<NodeLoad> DecodeNodeLoad(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption("not a node load report: " + text);
  for (const char* field : {"bytes", "tablets", "at_micros"}) {
    // nlohmann converts -1 to 2^64 - 1 without complaint: check the kind first.
    const auto* value = j.contains(field) ? &j[field] : nullptr;
    if (!value || !value->is_number_integer() || (!value->is_number_unsigned() && value->get<int64_t>() < 0)) {
      return Status::Corruption(std::string("node load report: ") + field + " is not a count: " + text);
    }
  }
  try {
    NodeLoad load;
    load.bytes = j.at("bytes").get<uint64_t>();
    load.tablets = j.at("tablets").get<uint64_t>();
    load.at_micros = j.at("at_micros").get<int64_t>();
    if (!OptionalRate(j, "replica_reads_per_second", &load.replica_reads_per_second) ||
        !OptionalRate(j, "replica_writes_per_second", &load.replica_writes_per_second)) {
      return Status::Corruption("node load report: a rate is not a number: " + text);
    }
    TESSERA_RETURN_IF_ERROR(DecodeTabletLoads(j, text, &load.tablet_loads));
    return load;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("node load report: ") + e.what());
  }
}

namespace {

// The key samples of the kMaxSampledTablets tablets of `tables` this node
// coordinated the most rows of (Database::TabletLoads: its own requests, not
// those it served as a replica), on their entries in load->tablet_loads.
void AddKeySamples(Database& db, const std::vector<std::shared_ptr<const TableSchema>>& tables, NodeLoad* load) {
  struct Sampled {
    std::shared_ptr<const TableSchema> table;
    TabletLoad tablet;
  };
  std::vector<Sampled> sampled;
  for (const auto& table : tables) {
    for (TabletLoad& t : db.TabletLoads(*table).tablets) {
      if (t.rows_per_second > 0 && t.sample.keys.size() >= kMinSampledKeys) sampled.push_back({table, std::move(t)});
    }
  }
  const size_t n = std::min(sampled.size(), kMaxSampledTablets);
  std::partial_sort(sampled.begin(), sampled.begin() + static_cast<std::ptrdiff_t>(n), sampled.end(),
                    [](const Sampled& a, const Sampled& b) { return a.tablet.rows_per_second > b.tablet.rows_per_second; });
  for (size_t i = 0; i < n; ++i) {
    const TableSchema& table = *sampled[i].table;
    const TabletLoad& t = sampled[i].tablet;
    std::vector<std::pair<std::string, double>> relative;
    for (const auto& [key, weight] : t.sample.keys) {
      if (auto r = RelativeKey(table.id, key)) relative.emplace_back(std::move(*r), weight);
    }
    const std::string uuid = UuidText(table.uuid);
    const std::string start = RelativeKey(table.id, t.start).value_or(std::string());
    auto it = std::find_if(load->tablet_loads.begin(), load->tablet_loads.end(), [&](const TabletLoadReport& r) {
      return r.table_uuid == uuid && r.start == start;
    });
    if (it == load->tablet_loads.end()) it = load->tablet_loads.insert(it, TabletLoadReport{uuid, start});
    it->sample = CoarsenSample(relative, kMaxReportedSampleKeys);
    it->sampled_writes = t.sample.writes;
    it->advances = t.sample.advances;
    it->near_tail = t.sample.near_tail;
  }
}

}  // namespace

NodeLoad MeasureNodeLoad(Database& db, const std::string& self_host_id) {
  NodeLoad load;
  // Replicated tables (the placement balancer's) with requests coordinated
  // here: only theirs have key samples worth a TabletLoads read.
  std::vector<std::shared_ptr<const TableSchema>> sampled;
  for (const auto& table : db.catalog().AllTables()) {
    const std::vector<TabletStatus> tablets = db.Tablets(*table);
    if (std::any_of(tablets.begin(), tablets.end(), [](const TabletStatus& t) {
          return !t.replicas.empty() && t.reads_per_second + t.writes_per_second > 0;
        })) {
      sampled.push_back(table);
    }
    for (const TabletStatus& t : tablets) {
      load.replica_reads_per_second += t.replica_reads_per_second;
      load.replica_writes_per_second += t.replica_writes_per_second;
      if (t.replica_reads_per_second + t.replica_writes_per_second > 0 || (!t.replicas.empty() && t.size_bytes > 0)) {
        load.tablet_loads.push_back({UuidText(table->uuid), RelativeKey(table->id, t.start).value_or(std::string()),
                                     t.replica_reads_per_second, t.replica_writes_per_second, t.size_bytes});
      }
      if (t.replicas.empty()) {  // node-local: system keyspaces, or a single node
        load.bytes += t.size_bytes;
      } else if (std::find(t.replicas.begin(), t.replicas.end(), self_host_id) != t.replicas.end()) {
        load.bytes += t.size_bytes;
        ++load.tablets;
      }
    }
  }
  // The busiest kMaxReportedTablets, then the largest kMaxReportedTablets of the rest.
  auto& list = load.tablet_loads;
  auto busiest = [](const auto& a, const auto& b) { return a.reads + a.writes > b.reads + b.writes; };
  std::sort(list.begin(), list.end(), busiest);
  auto rest = list.begin() + static_cast<std::ptrdiff_t>(std::min(list.size(), kMaxReportedTablets));
  std::sort(rest, list.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  if (list.size() > 2 * kMaxReportedTablets) list.resize(2 * kMaxReportedTablets);
  AddKeySamples(db, sampled, &load);
  load.at_micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  return load;
}

NodeLoadReporter::NodeLoadReporter(EtcdClient* etcd, Database* db, std::string self_host_id,
                                   std::chrono::milliseconds interval)
    : etcd_(etcd), db_(db), self_host_id_(std::move(self_host_id)), interval_(interval) {}

NodeLoadReporter::~NodeLoadReporter() { Stop(); }

void NodeLoadReporter::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = false;
  thread_ = std::thread([this] {
    SetCurrentThreadName("load-report");
    Run();
  });
}

void NodeLoadReporter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NodeLoadReporter::Run() {
  const std::string key = kLoadPrefix + UuidText(self_host_id_);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    auto put = etcd_->Put(key, EncodeNodeLoad(MeasureNodeLoad(*db_, self_host_id_)));
    if (!put.ok()) spdlog::warn("cluster: cannot report this node's load: {}", put.status().ToString());
    lock.lock();
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace tessera::cluster
