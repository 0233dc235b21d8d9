#include "cluster/node_load.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/etcd_client.h"
#include "cluster/replica_reads.h"
#include "common/bytes.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {

std::string EncodeNodeLoad(const NodeLoad& load) {
  nlohmann::json tablets = nlohmann::json::array();
  for (const auto& t : load.tablet_loads) {
    tablets.push_back({{"table", t.table_uuid},
                       {"start", ToHex(t.start)},
                       {"reads", t.reads},
                       {"writes", t.writes},
                       {"bytes", t.bytes}});
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
    t.table_uuid = e["table"].get<std::string>();
    out->push_back(std::move(t));
  }
  return Status::OK();
}

}  // namespace

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

NodeLoad MeasureNodeLoad(Database& db, const std::string& self_host_id) {
  NodeLoad load;
  for (const auto& table : db.catalog().AllTables()) {
    for (const TabletStatus& t : db.Tablets(*table)) {
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
  thread_ = std::thread([this] { Run(); });
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
