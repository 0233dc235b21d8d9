#include "cluster/schema_log.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cluster/node_record.h"

namespace tessera::cluster {
namespace {

using json = nlohmann::json;
constexpr int kLockLeaseSeconds = 30;
constexpr int kWaitMillis = 10'000;

std::string EntryKey(int64_t seq) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%020lld", static_cast<long long>(seq));
  return kSchemaLogPrefix + std::string(buf);
}

int64_t SeqOf(const std::string& key) {
  if (key.compare(0, sizeof(kSchemaLogPrefix) - 1, kSchemaLogPrefix) != 0) return 0;
  try {
    return std::stoll(key.substr(sizeof(kSchemaLogPrefix) - 1));
  } catch (...) {
    return 0;
  }
}

}  // namespace

SchemaLog::SchemaLog(const EtcdEndpoint& etcd_endpoint, std::string data_dir, std::string host_id, Apply apply)
    : etcd_(std::make_unique<EtcdClient>(etcd_endpoint)),
      data_dir_(std::move(data_dir)),
      host_id_(std::move(host_id)),
      apply_(std::move(apply)) {}

Result<std::unique_ptr<SchemaLog>> SchemaLog::Start(const EtcdEndpoint& etcd_endpoint, const std::string& data_dir,
                                                    const std::string& host_id, Apply apply) {
  std::unique_ptr<SchemaLog> log(new SchemaLog(etcd_endpoint, data_dir, host_id, std::move(apply)));
  if (std::ifstream in(data_dir + "/SCHEMA_LOG_APPLIED"); in) in >> log->applied_;
  TESSERA_ASSIGN_OR_RETURN(auto entries, log->etcd_->Range(kSchemaLogPrefix, EtcdPrefixEnd(kSchemaLogPrefix)));
  log->ApplyEntries(entries.kvs);
  log->watch_ = std::make_unique<EtcdWatch>(
      etcd_endpoint, kSchemaLogPrefix, EtcdPrefixEnd(kSchemaLogPrefix), entries.revision + 1,
      [raw = log.get()](const std::vector<EtcdWatchEvent>& events, int64_t) {
        std::vector<EtcdKeyValue> puts;
        for (const auto& e : events) {
          if (e.type == EtcdWatchEvent::Type::kPut) puts.push_back(e.kv);
        }
        raw->ApplyEntries(puts);
      },
      [](int64_t compact) {
        // The log is never compacted below what a live node needs (nothing
        // compacts it yet); a node this far behind must be rebuilt.
        spdlog::error("schema log: etcd compacted to revision {} past this node's watch", compact);
      });
  log->watch_->Start();
  return log;
}

SchemaLog::~SchemaLog() { Stop(); }

void SchemaLog::Stop() {
  if (watch_) watch_->Stop();
  watch_.reset();
}

int64_t SchemaLog::applied() const {
  std::lock_guard<std::mutex> lock(mu_);
  return applied_;
}

Status SchemaLog::PersistApplied(int64_t seq) {
  std::lock_guard<std::mutex> lock(persist_mu_);
  const std::string path = data_dir_ + "/SCHEMA_LOG_APPLIED", tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << seq << "\n";
    out.flush();
    if (!out) return Status::IOError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::IOError("cannot rename " + tmp);
  return Status::OK();
}

void SchemaLog::ApplyEntries(const std::vector<EtcdKeyValue>& kvs) {
  for (const auto& kv : kvs) {
    const int64_t seq = SeqOf(kv.key);
    if (seq <= applied()) continue;
    json entry = json::parse(kv.value, nullptr, false);
    const std::string origin = entry.is_object() ? entry.value("origin", std::string()) : std::string();
    if (!entry.is_object()) {
      spdlog::error("schema log: entry {} is not JSON; skipped", seq);
    } else if (origin != UuidText(host_id_)) {
      // This node's own entries ran here before they were logged.
      const std::string keyspace = entry.value("keyspace", std::string());
      const std::string statement = entry.value("statement", std::string());
      auto table_uuid = UuidFromText(entry.value("table_uuid", std::string()));
      if (Status s = apply_(keyspace, statement, table_uuid.ok() ? *table_uuid : std::string()); !s.ok()) {
        spdlog::warn("schema log: entry {} ({}) from node {}: {}", seq, statement.substr(0, 120), origin, s.ToString());
      } else {
        spdlog::info("schema log: applied entry {} from node {}: {}", seq, origin, statement.substr(0, 120));
      }
    }
    if (Status s = PersistApplied(seq); !s.ok()) spdlog::error("schema log: {}", s.ToString());
    std::lock_guard<std::mutex> lock(mu_);
    applied_ = seq;
    applied_cv_.notify_all();
  }
}

Status SchemaLog::WaitApplied(int64_t seq, int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  if (applied_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return applied_ >= seq; })) {
    return Status::OK();
  }
  return Status::Busy("this node has applied the schema log to " + std::to_string(applied_) + " of " +
                      std::to_string(seq) + "; try again");
}

Result<cql::SchemaOutcome> SchemaLog::Run(const std::string& keyspace, const std::string& statement,
                                          const std::function<Result<cql::SchemaOutcome>()>& execute) {
  std::lock_guard<std::mutex> run(run_mu_);
  TESSERA_ASSIGN_OR_RETURN(int64_t lease, etcd_->LeaseGrant(kLockLeaseSeconds));
  struct Release {
    EtcdClient* etcd;
    int64_t lease;
    ~Release() { (void)etcd->LeaseRevoke(lease); }  // frees the lock with the lease
  } release{etcd_.get(), lease};
  EtcdCompare free_lock{kSchemaLockKey, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, 0, {}};
  bool locked = false;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMillis);
       std::chrono::steady_clock::now() < deadline;) {
    TESSERA_ASSIGN_OR_RETURN(auto txn, etcd_->Txn({free_lock}, {EtcdOp::Put(kSchemaLockKey, UuidText(host_id_), lease)}));
    if ((locked = txn.succeeded)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!locked) return Status::Busy("another node has been changing the schema for 10 s; try again");
  TESSERA_ASSIGN_OR_RETURN(auto head, etcd_->Range(kSchemaHeadKey));
  const int64_t head_seq = head.kvs.empty() ? 0 : std::stoll(head.kvs[0].value);
  EtcdCompare same_head{kSchemaHeadKey, EtcdCompare::Target::kModRevision, EtcdCompare::Result::kEqual,
                        head.kvs.empty() ? 0 : head.kvs[0].mod_revision, {}};
  TESSERA_RETURN_IF_ERROR(WaitApplied(head_seq, kWaitMillis));
  auto outcome = execute();
  if (!outcome.ok() || !outcome->change) return outcome;
  const int64_t seq = head_seq + 1;
  json entry = {{"keyspace", keyspace}, {"statement", statement}, {"origin", UuidText(host_id_)}};
  if (outcome->table_uuid.size() == 16) entry["table_uuid"] = UuidText(outcome->table_uuid);
  auto txn = etcd_->Txn({same_head}, {EtcdOp::Put(EntryKey(seq), entry.dump()),
                                      EtcdOp::Put(kSchemaHeadKey, std::to_string(seq))});
  if (!txn.ok() || !txn->succeeded) {
    // Applied here, not recorded: the other nodes will not see it. Say so
    // instead of reporting success.
    spdlog::error("schema log: '{}' ran on this node but could not be recorded: {}", statement.substr(0, 120),
                  txn.ok() ? "the log moved under the lock" : txn.status().ToString());
    return Status::IOError("the schema change ran on this node but could not be recorded for the cluster");
  }
  if (Status s = PersistApplied(seq); !s.ok()) spdlog::error("schema log: {}", s.ToString());
  std::lock_guard<std::mutex> lock(mu_);
  if (applied_ < seq) applied_ = seq;
  applied_cv_.notify_all();
  return outcome;
}

}  // namespace tessera::cluster
