#include "cluster/tablet_migration.h"

#include <chrono>
#include <future>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/acknowledgements.h"
#include "cluster/etcd_client.h"
#include "cluster/replica_reads.h"
#include "cluster/replica_service.h"
#include "cluster/replicated_tablet.h"
#include "cluster/tablet_map_sync.h"
#include "common/bytes.h"
#include "common/failpoints.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MicrosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

// One move in progress: what every step needs.
class Migration {
 public:
  Migration(ReplicationServices* s, std::shared_ptr<const TableSchema> table, const MoveRequest& r,
            const MigrationOptions& o)
      : s_(s), table_(std::move(table)), r_(r), o_(o) {}

  Status Validate(const TabletReplicas& tablet);
  // REQUIRES: Validate succeeded.
  MoveReport Run();
  // Takes over `observed`, a tablet in transition whose driver is gone:
  // reverts it before write_both_read_new, else completes it.
  MoveReport Resume(const TabletReplicas& observed);

 private:
  // Writes `next` (nullopt: no transition) and `replicas` on the tablet,
  // provided it still holds the transition this driver last wrote.
  Result<int64_t> Write(const std::optional<TabletTransition>& next, const std::vector<std::string>& replicas);
  Status Barrier(int64_t revision, int64_t* micros);
  Status Stream();
  // Streams the tablet's range from the first live of `sources` (the next
  // one when it fails) to `target`, within the node's stream budget.
  Status StreamTo(const std::string& target, const std::vector<std::string>& sources);
  // Merges the Paxos state of the range's partitions on every live one of
  // `sources` into `target`'s (cluster/paxos_state.h): no accepted
  // proposal or promise is lost with a replica that leaves.
  Status CarryPaxosState(const std::string& target, const std::vector<std::string>& sources);
  Status DeleteRangeOn(const std::string& host);
  Result<std::string> Endpoint(const std::string& host);
  bool Alive(const std::string& host);
  void Revert(MoveReport* report);
  // The stages from `first` on, then the end (new replicas, no transition).
  MoveReport Advance(MigrationStage first, MoveReport report);
  // One system.tablet_events row on this node.
  void Record(const std::string& kind, const std::string& error);

  ReplicationServices* s_;
  std::shared_ptr<const TableSchema> table_;
  MoveRequest r_;
  MigrationOptions o_;
  std::optional<TabletTransition> current_;  // what the tablet holds, as this driver wrote it
  std::string end_;                           // the tablet's end (table-relative)
  std::vector<std::string> old_;              // its replicas before the move
  MoveReport* report_ = nullptr;
};

bool Migration::Alive(const std::string& host) {
  auto m = s_->membership->Member(host);
  return m && m->alive;
}

Result<std::string> Migration::Endpoint(const std::string& host) {
  auto m = s_->membership->Member(host);
  if (!m || !m->alive || m->record.internode_port <= 0) {
    return Status::IOError("node " + UuidText(host) + " is down");
  }
  return m->record.address + ":" + std::to_string(m->record.internode_port);
}

Status Migration::Validate(const TabletReplicas& tablet) {
  if (tablet.transition) return Status::InvalidArgument("the tablet is already being migrated");
  if (r_.from.empty() && r_.to.empty()) {
    return Status::InvalidArgument("a move names the node it leaves or the one it reaches");
  }
  const auto& old = tablet.replicas;
  const auto holds = [&old](const std::string& host) { return std::find(old.begin(), old.end(), host) != old.end(); };
  if (!r_.from.empty() && !holds(r_.from)) {
    return Status::InvalidArgument("node " + UuidText(r_.from) + " holds no replica of the tablet");
  }
  if (!r_.to.empty() && holds(r_.to)) {
    return Status::InvalidArgument("node " + UuidText(r_.to) + " already holds a replica of the tablet");
  }
  if (r_.to.empty() && old.size() < 2) return Status::InvalidArgument("a tablet's last replica is not dropped");
  auto from = r_.from.empty() ? std::nullopt : s_->membership->Member(r_.from);
  auto to = r_.to.empty() ? std::nullopt : s_->membership->Member(r_.to);
  if ((!r_.from.empty() && !from) || (!r_.to.empty() && !to)) {
    return Status::NotFound("both nodes must be members of the cluster");
  }
  if (to && !to->alive) return Status::InvalidArgument("node " + UuidText(r_.to) + " is down");
  if (from && to && from->record.data_center != to->record.data_center) {
    return Status::InvalidArgument("a replica moves within its data center (" + from->record.data_center + "), not to " +
                                   to->record.data_center);
  }
  end_ = tablet.end;
  old_ = tablet.replicas;
  return Status::OK();
}

Result<int64_t> Migration::Write(const std::optional<TabletTransition>& next, const std::vector<std::string>& replicas) {
  const auto expected = current_;
  const std::vector<EtcdCompare> fence = KeyCreatedAtFence(o_.fence_key, o_.fence_create_revision);
  auto revision = s_->placements->ChangeTablet(
      table_->uuid, r_.start, [&](TabletReplicas t) -> Result<std::optional<TabletReplicas>> {
        if (t.transition != expected) {
          return Status::Busy("the tablet's transition changed under this migration");
        }
        // Before the first stage nothing fences the tablet: a split (or
        // merge) recorded since it was validated would leave end_ past the
        // tablet, and the stream and the cleanup would take a neighbour's
        // keys (the cleanup deleting them on the only node holding them).
        if (t.end != end_ || (!expected && t.replicas != old_)) {
          return Status::Busy("the tablet was split, merged or moved since the migration was planned");
        }
        t.transition = next;
        t.replicas = replicas;
        return std::optional<TabletReplicas>(std::move(t));
      }, fence);
  if (revision.ok()) current_ = next;
  return revision;
}

Status Migration::Barrier(int64_t revision, int64_t* micros) {
  // A node that is down acknowledges nothing; it applies every placement
  // before it serves again (TabletMapSync::Start).
  TESSERA_ASSIGN_OR_RETURN(*micros, AwaitAcknowledgements(s_->membership, kPlacementAcksPrefix, revision,
                                                          o_.barrier_timeout_micros));
  return Status::OK();
}

template <typename T>
Result<T> Await(const std::function<void(std::function<void(Result<T>)>)>& call) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  call([promise](Result<T> r) { promise->set_value(std::move(r)); });
  return future.get();
}

Status ApplyOn(ReplicationServices* s, const TableSchema& table, const std::string& host, const std::string& endpoint,
               const WriteSet& relative) {
  if (host == s->self_host_id) return ApplyLocal(s->db->engine(), table.id, relative);
  auto promise = std::make_shared<std::promise<Status>>();
  auto future = promise->get_future();
  s->client->Apply(endpoint, table.uuid, relative, s->write_timeout_micros, /*trace=*/nullptr,
                   [promise](Status st) { promise->set_value(std::move(st)); });
  return future.get();
}

Status Migration::Stream() {
  const auto start = Clock::now();
  if (r_.to.empty()) {
    // A replica dropped: what it holds goes to every other replica first,
    // so that a write only it acknowledged (at ONE) is not lost with it.
    if (!Alive(r_.from)) {
      spdlog::warn("tablets: {}.{}: node {} is down; its replica is dropped without streaming", table_->keyspace,
                   table_->name, UuidText(r_.from));
      return Status::OK();
    }
    for (const auto& host : old_) {
      if (host != r_.from && Alive(host)) {
        TESSERA_RETURN_IF_ERROR(StreamTo(host, {r_.from}));
        TESSERA_RETURN_IF_ERROR(CarryPaxosState(host, {r_.from}));
      }
    }
  } else {
    // The leaving replica first, then the others: a source that fails
    // (killed before its lease expired) hands over to the next one at the
    // position reached (windows are applied in key order, and applying one
    // twice changes nothing).
    std::vector<std::string> sources;
    if (!r_.from.empty()) sources.push_back(r_.from);
    for (const auto& host : old_) {
      if (host != r_.from) sources.push_back(host);
    }
    TESSERA_RETURN_IF_ERROR(StreamTo(r_.to, sources));
    // From every old replica, not the first alone: a proposal may have
    // been accepted by some of them only.
    TESSERA_RETURN_IF_ERROR(CarryPaxosState(r_.to, sources));
  }
  report_->streaming_micros = MicrosSince(start);
  return Status::OK();
}

Status Migration::CarryPaxosState(const std::string& target, const std::vector<std::string>& sources) {
  ReplicaService* local = s_->local_replica_service;
  if (local == nullptr) return Status::OK();  // a node that serves no replica requests runs no Paxos
  TESSERA_ASSIGN_OR_RETURN(std::string target_endpoint,
                           target == s_->self_host_id ? Result<std::string>(std::string()) : Endpoint(target));
  for (const auto& host : sources) {
    if (host == target || !Alive(host)) continue;
    Result<PaxosStateRows> rows = [&]() -> Result<PaxosStateRows> {
      if (host == s_->self_host_id) return local->ExportPaxosState(table_->uuid, r_.start, end_);
      TESSERA_ASSIGN_OR_RETURN(std::string endpoint, Endpoint(host));
      return Await<PaxosStateRows>([&](std::function<void(Result<PaxosStateRows>)> done) {
        s_->client->ExportPaxosState(endpoint, table_->uuid, r_.start, end_, s_->read_timeout_micros,
                                     std::move(done));
      });
    }();
    if (!rows.ok()) {
      // As a source that fails while streaming: the others' state still goes.
      spdlog::warn("tablets: {}.{}: the Paxos state of {} could not be read ({}); carried from the others",
                   table_->keyspace, table_->name, UuidText(host), rows.status().ToString());
      continue;
    }
    if (rows->empty()) continue;
    Status imported = [&]() -> Status {
      if (target == s_->self_host_id) return local->ImportPaxosState(table_->uuid, *rows);
      auto promise = std::make_shared<std::promise<Status>>();
      auto future = promise->get_future();
      s_->client->ImportPaxosState(target_endpoint, table_->uuid, *rows, s_->write_timeout_micros,
                                   [promise](Status st) { promise->set_value(std::move(st)); });
      return future.get();
    }();
    TESSERA_RETURN_IF_ERROR(imported);
    report_->paxos_rows += rows->size();
  }
  return Status::OK();
}

Status Migration::StreamTo(const std::string& target, const std::vector<std::string>& sources) {
  TESSERA_ASSIGN_OR_RETURN(std::string target_endpoint,
                           target == s_->self_host_id ? Result<std::string>(std::string()) : Endpoint(target));
  RangeQuery q;
  q.table_uuid = table_->uuid;
  q.lower = r_.start;
  q.upper = end_;
  q.from = r_.start;
  q.from_inclusive = true;
  q.limit = o_.window_keys;
  q.internal = true;
  size_t source = 0;
  Status last = Status::IOError("no replica of the tablet is up to stream from");
  for (;;) {
    while (source < sources.size() && !Alive(sources[source])) ++source;
    if (source == sources.size()) return last;
    const std::string& host = sources[source];
    Result<RangeBatch> batch = [&]() -> Result<RangeBatch> {
      if (host == s_->self_host_id) return ReadRangeLocal(s_->db->engine(), table_->id, q);
      TESSERA_ASSIGN_OR_RETURN(std::string endpoint, Endpoint(host));
      return Await<RangeBatch>([&](std::function<void(Result<RangeBatch>)> done) {
        s_->client->ReadRange(endpoint, q, s_->read_timeout_micros, /*trace=*/nullptr, std::move(done));
      });
    }();
    if (!batch.ok()) {
      spdlog::warn("tablets: {}.{}: streaming from {} failed ({}); trying another replica", table_->keyspace,
                   table_->name, UuidText(host), batch.status().ToString());
      last = batch.status();
      ++source;
      continue;
    }
    if (batch->entries.empty()) break;
    WriteSet window;
    uint64_t bytes = 0;
    for (const auto& [key, value] : batch->entries) {
      window.Merge(key, value);
      bytes += key.size() + value.size();
    }
    if (s_->stream_limiter) s_->stream_limiter->Take(bytes);
    TESSERA_RETURN_IF_ERROR(ApplyOn(s_, *table_, target, target_endpoint, window));
    report_->streamed_keys += batch->entries.size();
    report_->streamed_bytes += bytes;
    s_->streamed_keys += batch->entries.size();
    s_->streamed_bytes += bytes;
    if (!batch->more) break;
    q.from = batch->entries.back().first;
    q.from_inclusive = false;
  }
  return Status::OK();
}

Status Migration::DeleteRangeOn(const std::string& host) {
  if (!Alive(host)) {
    spdlog::warn("tablets: {}.{}: node {} is down; its copy of a moved tablet stays until it is removed",
                 table_->keyspace, table_->name, UuidText(host));
    return Status::OK();
  }
  TESSERA_ASSIGN_OR_RETURN(std::string endpoint,
                           host == s_->self_host_id ? Result<std::string>(std::string()) : Endpoint(host));
  WriteSet drop;
  drop.DeleteRange(r_.start, end_);
  return ApplyOn(s_, *table_, host, endpoint, drop);
}

void Migration::Record(const std::string& kind, const std::string& error) {
  auto name = [this](const std::string& host) {
    auto m = s_->membership->Member(host);
    return m ? m->record.address : UuidText(host);
  };
  TabletEvent e;
  e.at_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count();
  e.table_id = table_->id;
  e.kind = kind;
  const std::string what = r_.from.empty() ? " replica added on " + name(r_.to)
                           : r_.to.empty() ? " replica dropped from " + name(r_.from)
                                           : " from " + name(r_.from) + " to " + name(r_.to);
  e.reason = r_.reason + "; tablet " + (r_.start.empty() ? std::string("start") : ToHex(r_.start)) + what +
             (error.empty() ? "" : ": " + error);
  s_->db->RecordTabletEvent(std::move(e));
}

void Migration::Revert(MoveReport* report) {
  // The replicas do not change while a transition is on (every change is
  // fenced by it), so old_ is what the tablet holds.
  auto revision = Write(std::nullopt, old_);
  int64_t micros = 0;
  if (!revision.ok() || !Barrier(*revision, &micros).ok()) {
    report->stopped_at = current_ ? MigrationStageName(current_->stage) : "";
    report->error += "; and the revert did not finish: " +
                     (revision.ok() ? std::string("a node did not acknowledge it") : revision.status().ToString());
    return;
  }
  report->stages.push_back({"reverted", *revision, micros});
  if (r_.to.empty()) return;  // a drop: the others keep what was streamed to them
  if (Status st = DeleteRangeOn(r_.to); !st.ok()) report->error += "; the pending copy stays: " + st.ToString();
}

MoveReport Migration::Run() {
  // Holds or fails the move after it was validated, before it writes anything.
  if (s_->failpoints) {
    if (Status st = s_->failpoints->Hit("migration.planned"); !st.ok()) {
      MoveReport report;
      report.error = "planned: " + st.ToString();
      return report;
    }
  }
  return Advance(MigrationStage::kAllowWriteBothReadOld, MoveReport{});
}

MoveReport Migration::Resume(const TabletReplicas& observed) {
  current_ = observed.transition;
  r_.from = current_->leaving;
  r_.to = current_->pending;
  end_ = observed.end;
  old_ = observed.replicas;
  MoveReport report;
  const std::string driver = current_->driver.empty() ? std::string("unknown") : UuidText(current_->driver);
  spdlog::warn("tablets: {}.{}: taking over the migration of tablet {} at {} from its driver {}", table_->keyspace,
               table_->name, ToHex(r_.start), MigrationStageName(current_->stage), driver);
  // Becomes the driver first: a stale `observed` (the move ended or was
  // taken over meanwhile) is refused here, before anything is reverted.
  TabletTransition mine = *current_;
  mine.driver = s_->self_host_id;
  if (auto taken = Write(mine, old_); !taken.ok()) {
    report.error = "not taken over: " + taken.status().ToString();
    return report;
  }
  if (current_->stage < MigrationStage::kWriteBothReadNew) {
    report_ = &report;
    report.error = std::string("resumed at ") + MigrationStageName(current_->stage) + ": its driver " + driver +
                   " is gone; reverted";
    Revert(&report);
    Record("migration reverted", report.error);
    return report;
  }
  return Advance(current_->stage, std::move(report));
}

MoveReport Migration::Advance(MigrationStage first, MoveReport report) {
  const std::vector<std::string> old = old_;
  report_ = &report;
  TabletTransition t{first, r_.from, r_.to, s_->self_host_id};
  for (std::optional<MigrationStage> stage = t.stage; stage; stage = NextMigrationStage(*stage)) {
    t.stage = *stage;
    auto revision = Write(t, old);
    int64_t micros = 0;
    Status st = revision.ok() ? Barrier(*revision, &micros) : revision.status();
    if (st.ok()) report.stages.push_back({MigrationStageName(t.stage), *revision, micros});
    // Holds or fails the move here, with every node serving the stage.
    if (st.ok() && s_->failpoints) st = s_->failpoints->Hit(std::string("migration.") + MigrationStageName(t.stage));
    if (st.ok() && t.stage == MigrationStage::kStreaming) st = Stream();
    if (st.ok() && t.stage == MigrationStage::kCleanup && !r_.from.empty()) st = DeleteRangeOn(r_.from);
    if (!st.ok()) {
      report.error = std::string(MigrationStageName(t.stage)) + ": " + st.ToString();
      if (!current_) {
        // The first stage was never written: nothing to revert.
        Record("migration refused", report.error);
      } else if (current_->stage < MigrationStage::kWriteBothReadNew) {
        Revert(&report);
        Record("migration reverted", report.error);
      } else {
        report.stopped_at = MigrationStageName(current_->stage);
      }
      spdlog::warn("tablets: {}.{}: moving a replica failed: {}", table_->keyspace, table_->name, report.error);
      return report;
    }
  }
  auto revision = Write(std::nullopt, NewReplicas(old, t));
  int64_t micros = 0;
  Status st = revision.ok() ? Barrier(*revision, &micros) : revision.status();
  if (!st.ok()) {
    report.error = "end: " + st.ToString();
    report.stopped_at = current_ ? MigrationStageName(current_->stage) : "";
    return report;
  }
  report.stages.push_back({"end", *revision, micros});
  report.completed = true;
  Record("migration", "");
  spdlog::info("tablets: {}.{}: moved a replica from {} to {} ({} keys, {} bytes streamed)", table_->keyspace,
               table_->name, r_.from.empty() ? "(none: added)" : UuidText(r_.from),
               r_.to.empty() ? "(none: dropped)" : UuidText(r_.to), report.streamed_keys, report.streamed_bytes);
  return report;
}

}  // namespace

Result<MoveReport> MoveTabletReplica(ReplicationServices* s, const MoveRequest& r, const MigrationOptions& o) {
  TESSERA_ASSIGN_OR_RETURN(auto table, s->db->catalog().GetTable(r.keyspace, r.table));
  TESSERA_ASSIGN_OR_RETURN(
      auto placement,
      s->placements->Get(table->uuid, []() -> Result<std::vector<TabletReplicas>> {
        return Status::NotFound("the table has no placement yet: it has served no request");
      }));
  auto pos = std::find_if(placement->begin(), placement->end(), [&](const auto& t) { return t.start == r.start; });
  if (pos == placement->end()) return Status::NotFound("no tablet of the table starts at " + ToHex(r.start));
  Migration migration(s, table, r, o);
  TESSERA_RETURN_IF_ERROR(migration.Validate(*pos));
  const std::string key = MigrationKey(table->uuid, r.start);
  if (!s->migrations_in_hand.Take(key)) return Status::InvalidArgument("the tablet is already being migrated");
  MoveReport report = migration.Run();
  s->migrations_in_hand.Release(key);
  return report;
}

Result<MoveReport> ResumeMigration(ReplicationServices* s, std::shared_ptr<const TableSchema> table,
                                   const TabletReplicas& observed, const MigrationOptions& o) {
  if (!observed.transition) return Status::InvalidArgument("the tablet is not in transition");
  const std::string key = MigrationKey(table->uuid, observed.start);
  if (!s->migrations_in_hand.Take(key)) return Status::InvalidArgument("the migration is in hand here");
  MoveRequest r;
  r.keyspace = table->keyspace;
  r.table = table->name;
  r.start = observed.start;
  r.reason = "taken over";
  Migration migration(s, std::move(table), r, o);
  MoveReport report = migration.Resume(observed);
  s->migrations_in_hand.Release(key);
  return report;
}

namespace {

Result<std::string> MemberNamed(const Membership& membership, const std::string& name) {
  for (const auto& m : membership.Members()) {
    if (m.record.address == name || UuidText(m.record.host_id) == name) return m.record.host_id;
  }
  return Status::NotFound("no member of the cluster is " + name);
}

}  // namespace

Result<MoveReport> MoveTabletReplica(ReplicationServices* s, const std::string& keyspace, const std::string& table,
                                     const std::string& start_hex, const std::string& from, const std::string& to,
                                     const MigrationOptions& o) {
  MoveRequest r;
  r.keyspace = keyspace;
  r.table = table;
  if (!FromHex(start_hex, &r.start)) return Status::InvalidArgument("start must be hex, got " + start_hex);
  TESSERA_ASSIGN_OR_RETURN(r.from, MemberNamed(*s->membership, from));
  TESSERA_ASSIGN_OR_RETURN(r.to, MemberNamed(*s->membership, to));
  return MoveTabletReplica(s, r, o);
}

std::string MoveReportJson(const MoveReport& report) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : report.stages) {
    stages.push_back({{"stage", st.name}, {"revision", st.revision}, {"barrier_micros", st.barrier_micros}});
  }
  return nlohmann::json{{"completed", report.completed},
                        {"stages", stages},
                        {"streamed_keys", report.streamed_keys},
                        {"streamed_bytes", report.streamed_bytes},
                        {"paxos_rows", report.paxos_rows},
                        {"streaming_micros", report.streaming_micros},
                        {"stream_bytes_per_second",
                         report.streaming_micros > 0 ? static_cast<uint64_t>(1e6 * static_cast<double>(
                                                           report.streamed_bytes) / report.streaming_micros)
                                                     : 0},
                        {"stopped_at", report.stopped_at},
                        {"error", report.error}}
      .dump();
}

}  // namespace tessera::cluster
