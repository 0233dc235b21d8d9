#include "cluster/node_load.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/etcd_client.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {

std::string EncodeNodeLoad(const NodeLoad& load) {
  return nlohmann::json{{"bytes", load.bytes}, {"tablets", load.tablets}, {"at_micros", load.at_micros}}.dump();
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
    return load;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("node load report: ") + e.what());
  }
}

NodeLoad MeasureNodeLoad(Database& db, const std::string& self_host_id) {
  NodeLoad load;
  for (const auto& table : db.catalog().AllTables()) {
    for (const TabletStatus& t : db.Tablets(*table)) {
      if (t.replicas.empty()) {  // node-local: system keyspaces, or a single node
        load.bytes += t.size_bytes;
      } else if (std::find(t.replicas.begin(), t.replicas.end(), self_host_id) != t.replicas.end()) {
        load.bytes += t.size_bytes;
        ++load.tablets;
      }
    }
  }
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
