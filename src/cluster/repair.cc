#include "cluster/repair.h"

#include <future>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/repair_holds.h"
#include "common/bytes.h"
#include "common/failpoints.h"
#include "common/uuid.h"
#include "db/database.h"
#include "tablets/request_consistency.h"

namespace tessera::cluster {
namespace {

// One replica's digest of [start, end) of the table.
Result<RangeDigest> ReplicaDigest(ReplicationServices* s, const TableSchema& table, const std::string& host,
                                  const std::string& start, const std::string& end) {
  if (host == s->self_host_id) return DigestLocal(s->db->engine(), table.id, start, end);
  auto member = s->membership->Member(host);
  if (!member || !member->alive || member->record.internode_port <= 0) {
    return Status::IOError("replica " + UuidText(host) + " is down");
  }
  std::promise<Result<RangeDigest>> answered;
  auto result = answered.get_future();
  s->client->Digest(member->record.address + ":" + std::to_string(member->record.internode_port), table.uuid, start,
                    end, s->read_timeout_micros,
                    [&answered](Result<RangeDigest> d) { answered.set_value(std::move(d)); });
  return result.get();
}

Status Digests(ReplicationServices* s, const TableSchema& table, TabletRepair* t, std::vector<RangeDigest>* out) {
  out->clear();
  for (const auto& host : t->replicas) {
    TESSERA_ASSIGN_OR_RETURN(RangeDigest d, ReplicaDigest(s, table, host, t->start, t->end));
    out->push_back(d);
  }
  return Status::OK();
}

bool AllEqual(const std::vector<RangeDigest>& digests) {
  for (const auto& d : digests) {
    if (d.digest != digests.front().digest || d.keys != digests.front().keys) return false;
  }
  return true;
}

void RepairTablet(ReplicationServices* s, const std::shared_ptr<const TableSchema>& table, const TabletStatus& tablet,
                  TabletRepair* t) {
  t->keyspace = table->keyspace;
  t->table = table->name;
  t->start = RelativeKey(table->id, tablet.start).value_or(std::string());
  t->end = RelativeKey(table->id, tablet.end).value_or(std::string());
  ReplicatedTablet replica(s, table, tablet.start, tablet.end);
  auto replicas = replica.Replicas();
  if (!replicas.ok()) {
    t->error = replicas.status().ToString();
    return;
  }
  t->replicas = *replicas;
  if (Status d = Digests(s, *table, t, &t->before); !d.ok()) {
    t->error = d.ToString();
    return;
  }
  if (AllEqual(t->before)) {
    t->consistent = true;
    return;
  }
  t->repaired = true;
  const uint64_t repairs_before = s->read_repairs.load();
  {
    // A read at ALL writes back to every replica what one lacks (read repair).
    auto it = replica.NewIterator(tablet.start, tablet.end, kAllConsistency);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    if (!it->status().ok()) {
      t->error = "reading the tablet at ALL: " + it->status().ToString();
      return;
    }
  }
  t->keys_written = s->read_repairs.load() - repairs_before;
  if (Status d = Digests(s, *table, t, &t->after); !d.ok()) {
    t->error = d.ToString();
    return;
  }
  t->consistent = AllEqual(t->after);
}

nlohmann::json DigestsJson(const std::vector<std::string>& replicas, const std::vector<RangeDigest>& digests) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < digests.size() && i < replicas.size(); ++i) {
    out.push_back({{"host_id", UuidText(replicas[i])},
                   {"digest", fmt::format("{:016x}", digests[i].digest)},
                   {"keys", digests[i].keys}});
  }
  return out;
}

}  // namespace

Result<RepairReport> RepairTables(ReplicationServices* s, const std::string& keyspace, const std::string& table) {
  std::vector<std::shared_ptr<const TableSchema>> tables;
  if (!keyspace.empty()) {
    TESSERA_RETURN_IF_ERROR(s->db->catalog().GetKeyspace(keyspace).status());
    for (auto& t : s->db->catalog().Tables(keyspace)) {
      if (table.empty() || t->name == table) tables.push_back(t);
    }
    if (!table.empty() && tables.empty()) return Status::NotFound("unknown table " + keyspace + "." + table);
  } else {
    for (auto& t : s->db->catalog().AllTables()) {
      if (!t->keyspace.starts_with("system")) tables.push_back(t);
    }
  }
  // No replica purges these tables' tombstones until the repair is done.
  std::vector<std::string> uuids;
  for (const auto& t : tables) uuids.push_back(UuidText(t->uuid));
  auto hold = RepairHold::Acquire(s->membership, s->self_host_id, uuids);
  if (!hold.ok()) return Status::Busy("repair not started: " + hold.status().ToString());
  if (s->failpoints) TESSERA_RETURN_IF_ERROR(s->failpoints->Hit("repair.held"));
  RepairReport report;
  for (const auto& t : tables) {
    for (const TabletStatus& tablet : s->db->Tablets(*t)) {
      TabletRepair r;
      RepairTablet(s, t, tablet, &r);
      report.consistent += r.consistent;
      report.repaired += r.repaired && r.error.empty();
      report.failed += !r.error.empty();
      if (!r.error.empty()) spdlog::warn("repair of {}.{}: {}", t->keyspace, t->name, r.error);
      report.tablets.push_back(std::move(r));
    }
  }
  return report;
}

std::string RepairReportJson(const RepairReport& report) {
  nlohmann::json tablets = nlohmann::json::array();
  for (const auto& t : report.tablets) {
    nlohmann::json j = {{"keyspace", t.keyspace},
                        {"table", t.table},
                        {"start", ToHex(t.start)},
                        {"end", ToHex(t.end)},
                        {"replicas", DigestsJson(t.replicas, t.before)},
                        {"repaired", t.repaired},
                        {"consistent", t.consistent},
                        {"keys_written", t.keys_written}};
    if (t.repaired) j["after"] = DigestsJson(t.replicas, t.after);
    if (!t.error.empty()) j["error"] = t.error;
    tablets.push_back(std::move(j));
  }
  return nlohmann::json({{"tablets", tablets},
                         {"consistent", report.consistent},
                         {"repaired", report.repaired},
                         {"failed", report.failed}})
      .dump();
}

}  // namespace tessera::cluster
