#include "cluster/repair_holds.h"

#include <chrono>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/acknowledgements.h"
#include "cluster/membership.h"
#include "cluster/replica_reads.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {
namespace {

// The table uuid texts a hold lists; nothing for a value that is not a list of strings.
std::vector<std::string> DecodeTables(const std::string& value) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (e.is_string()) out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

RepairHoldSync::RepairHoldSync(Database* db, EtcdClient* etcd, EtcdEndpoint endpoint, std::string self_host_id)
    : db_(db), etcd_(etcd), endpoint_(std::move(endpoint)), self_host_id_(std::move(self_host_id)) {}

RepairHoldSync::~RepairHoldSync() { Stop(); }

Status RepairHoldSync::Start() {
  TESSERA_ASSIGN_OR_RETURN(EtcdRangeResult all, etcd_->Range(kRepairHoldsPrefix, EtcdPrefixEnd(kRepairHoldsPrefix)));
  for (const auto& kv : all.kvs) by_holder_[kv.key] = DecodeTables(kv.value);
  Apply(all.revision);
  watch_ = std::make_unique<EtcdWatch>(
      endpoint_, kRepairHoldsPrefix, EtcdPrefixEnd(kRepairHoldsPrefix), all.revision + 1,
      [this](const std::vector<EtcdWatchEvent>& events, int64_t) {
        int64_t newest = 0;
        for (const auto& e : events) {
          if (e.type == EtcdWatchEvent::Type::kPut) {
            by_holder_[e.kv.key] = DecodeTables(e.kv.value);
          } else {
            by_holder_.erase(e.kv.key);
          }
          newest = std::max(newest, e.kv.mod_revision);
        }
        if (newest > 0) Apply(newest);
      });
  watch_->Start();
  return Status::OK();
}

void RepairHoldSync::Stop() {
  if (watch_) watch_->Stop();
  watch_.reset();
}

void RepairHoldSync::Apply(int64_t revision) {
  std::set<std::string> held;
  for (const auto& [key, tables] : by_holder_) held.insert(tables.begin(), tables.end());
  for (const auto& table : db_->catalog().AllTables()) {
    std::vector<std::pair<std::string, std::string>> ranges;
    if (held.count(UuidText(table->uuid))) ranges.emplace_back(AbsoluteKey(table->id, ""), AbsoluteEnd(table->id, ""));
    db_->engine()->registry().SetPurgeHolds(kRepairPurgeHold, table->id, std::move(ranges));
  }
  auto put = etcd_->Put(kRepairHoldAcksPrefix + UuidText(self_host_id_), std::to_string(revision));
  if (!put.ok()) spdlog::warn("repair: cannot acknowledge holds revision {}: {}", revision, put.status().ToString());
}

Result<std::unique_ptr<RepairHold>> RepairHold::Acquire(Membership* membership, const std::string& self_host_id,
                                                        const std::vector<std::string>& table_uuids,
                                                        int64_t timeout_micros) {
  EtcdClient& etcd = membership->etcd();
  TESSERA_ASSIGN_OR_RETURN(int64_t lease, etcd.LeaseGrant(kLeaseSeconds));
  std::unique_ptr<RepairHold> hold(new RepairHold(&etcd, lease));
  TESSERA_ASSIGN_OR_RETURN(int64_t revision, etcd.Put(kRepairHoldsPrefix + UuidText(self_host_id),
                                                       nlohmann::json(table_uuids).dump(), lease));
  TESSERA_RETURN_IF_ERROR(
      AwaitAcknowledgements(membership, kRepairHoldAcksPrefix, revision, timeout_micros).status());
  return hold;
}

RepairHold::RepairHold(EtcdClient* etcd, int64_t lease) : etcd_(etcd), lease_(lease) {
  thread_ = std::thread([this] { KeepAlive(); });
}

RepairHold::~RepairHold() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (Status s = etcd_->LeaseRevoke(lease_); !s.ok()) {
    spdlog::warn("repair: cannot release the tombstone holds (they expire with their lease): {}", s.ToString());
  }
}

void RepairHold::KeepAlive() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::seconds(kLeaseSeconds) / 3, [this] { return stopping_; })) {
    if (auto kept = etcd_->LeaseKeepAlive(lease_); !kept.ok()) {
      spdlog::warn("repair: the tombstone holds' lease could not be renewed: {}", kept.status().ToString());
    }
  }
}

}  // namespace tessera::cluster
