// Coordinator (coordinator/coordinator.h): a cluster node's writes, routed
// to their tablets by the store (Database::RouteWrite) and sent to the
// replicas the resolver chooses for each tablet, one write per replica set;
// and TRUNCATE on every replica.
#include <algorithm>
#include <map>
#include <mutex>

#include "common/bytes.h"
#include "common/blocking_wait.h"
#include "coordinator/coordinator.h"

namespace tessera {

Status Coordinator::ApplyBase(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                              const RequestConsistency& consistency) {
  if (!replicated()) return db_->ApplyBatch(mutations, warnings, consistency);
  if (mutations.empty()) return Status::OK();
  Database::RoutedWrite write;
  TESSERA_RETURN_IF_ERROR(db_->RouteWrite(mutations, warnings, &write));
  if (write.parts.empty()) return Status::OK();
  TESSERA_RETURN_IF_ERROR(ApplyToReplicas(write.ws, consistency));
  db_->CountRoutedWrite(write);
  return Status::OK();
}

void Coordinator::ApplyBaseAsync(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                                 WriteDone done) {
  auto write = std::make_shared<Database::RoutedWrite>();
  std::vector<std::string> warnings;
  Status routed = db_->RouteWrite(mutations, &warnings, write.get());
  if (!routed.ok() || write->parts.empty()) return done(std::move(routed), std::move(warnings));
  const WriteSet& ws = write->ws;
  ApplyToReplicasAsync(ws, consistency,
                       [db = db_, write, warnings = std::move(warnings), done = std::move(done)](Status s) mutable {
                         if (s.ok()) db->CountRoutedWrite(*write);
                         done(std::move(s), std::move(warnings));
                       });
}

Result<std::shared_ptr<Replica>> Coordinator::GroupByReplica(const WriteSet& ws, const RequestConsistency& consistency,
                                          std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>>* groups) {
  // The replica of each tablet reached is chosen once (ReplicaOf); tablets
  // the local replica serves share one group.
  std::map<uint32_t, std::pair<std::shared_ptr<const TabletMap>, std::shared_ptr<const TableSchema>>> tables;
  struct Reached {
    uint32_t table_id;
    TabletId tablet_id;
    size_t replica;  // into `replicas`
  };
  std::vector<Reached> reached;
  std::vector<std::shared_ptr<Replica>> replicas;  // distinct
  auto replica_of = [&](std::string_view key) -> Result<size_t> {
    if (key.size() < 4) return Status::InvalidArgument("a write outside every table");
    const uint32_t table_id = GetBigEndian32(key.data());
    auto& [map, table] = tables[table_id];
    if (!map) {
      map = db_->TabletsOf(table_id);
      table = db_->catalog().GetTableById(table_id);
    }
    if (!map || !table) return Status::NotFound("the table was dropped");
    const Tablet& tablet = map->Find(key);
    for (const Reached& r : reached) {
      if (r.table_id == table_id && r.tablet_id == tablet.id) return r.replica;
    }
    std::shared_ptr<Replica> replica = ReplicaOf(table, tablet);
    size_t index = replicas.size();
    if (replica == db_->local_replica()) {
      index = static_cast<size_t>(std::find(replicas.begin(), replicas.end(), replica) - replicas.begin());
    }
    if (index == replicas.size()) replicas.push_back(std::move(replica));
    reached.push_back({table_id, tablet.id, index});
    return index;
  };
  std::vector<size_t> replica_of_op;
  replica_of_op.reserve(ws.ops().size());
  for (const WriteSet::Op& op : ws.ops()) {
    TESSERA_ASSIGN_OR_RETURN(size_t index, replica_of(op.key));
    replica_of_op.push_back(index);
  }
  if (replicas.empty()) return std::shared_ptr<Replica>();
  if (replicas.size() == 1) return replicas.front();
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> group_of_replica;
  // A conditional write's own partition goes first.
  if (consistency.paxos) {
    Result<size_t> index = replica_of(consistency.paxos->partition);
    if (index.ok()) {
      group_of_replica.assign(replicas.size(), kNone);
      group_of_replica[*index] = 0;
      groups->push_back({replicas[*index], WriteSet()});
    }
  }
  group_of_replica.resize(replicas.size(), kNone);
  for (size_t i = 0; i < replica_of_op.size(); ++i) {
    size_t& group = group_of_replica[replica_of_op[i]];
    if (group == kNone) {
      group = groups->size();
      groups->push_back({replicas[replica_of_op[i]], WriteSet()});
    }
    const WriteSet::Op& op = ws.ops()[i];
    if (op.kind == WriteSet::Op::kMerge) {
      (*groups)[group].second.Merge(op.key, op.value);
    } else {
      (*groups)[group].second.DeleteRange(op.key, op.value);
    }
  }
  return std::shared_ptr<Replica>();
}

Status Coordinator::ApplyToReplicas(const WriteSet& ws, const RequestConsistency& consistency) {
  return WaitFor<Status>([&](std::function<void(Status)> done) { ApplyToReplicasAsync(ws, consistency, std::move(done)); });
}

void Coordinator::ApplyToReplicasAsync(const WriteSet& ws, const RequestConsistency& consistency,
                                    std::function<void(Status)> done) {
  // Several replica sets (only in a cluster): one write each, as Cassandra's
  // unlogged batch across replica sets, all sent at once; the first error is
  // answered once all did. A conditional write's own partition goes first,
  // alone: when its round fails, nothing else (index entries) is written.
  std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>> groups;
  Result<std::shared_ptr<Replica>> all = GroupByReplica(ws, consistency, &groups);
  if (!all.ok()) return done(all.status());
  if (*all) return (*all)->ApplyAsync(ws, consistency, std::move(done));
  // GroupByReplica puts a conditional write's own group first, even when
  // `ws` (its index entries, say) writes nothing of its partition: then
  // nothing waits for it, and it is not sent.
  const bool own_first =
      consistency.paxos && !groups.empty() &&
      std::any_of(groups.front().second.ops().begin(), groups.front().second.ops().end(),
                  [&](const WriteSet::Op& op) { return op.key.starts_with(consistency.paxos->partition); });
  groups.erase(std::remove_if(groups.begin(), groups.end(), [](const auto& g) { return g.second.empty(); }),
               groups.end());
  if (groups.empty()) return done(Status::OK());
  if (own_first && groups.size() > 1) {
    auto rest = std::make_shared<std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>>>(
        std::make_move_iterator(groups.begin() + 1), std::make_move_iterator(groups.end()));
    const std::pair<std::shared_ptr<Replica>, WriteSet>& own = groups.front();
    own.first->ApplyAsync(own.second, consistency, [rest, consistency, done = std::move(done)](Status s) {
      if (!s.ok()) return done(std::move(s));
      ApplyGroupsAsync(std::move(*rest), consistency, std::move(done));
    });
    return;
  }
  ApplyGroupsAsync(std::move(groups), consistency, std::move(done));
}

void Coordinator::ApplyGroupsAsync(std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>> groups,
                                   const RequestConsistency& consistency, std::function<void(Status)> done) {
  // Several replica sets: all sent at once, the first error answered once all did.
  struct Join {
    std::mutex mu;
    size_t remaining = 0;
    Status first;
    std::function<void(Status)> done;
  };
  auto join = std::make_shared<Join>();
  join->remaining = groups.size();
  join->done = std::move(done);
  for (auto& [replica, part] : groups) {
    replica->ApplyAsync(part, consistency, [join](Status s) {
      std::unique_lock<std::mutex> lock(join->mu);
      if (!s.ok() && join->first.ok()) join->first = std::move(s);
      if (--join->remaining > 0) return;
      lock.unlock();
      join->done(std::move(join->first));
    });
  }
}


Status Coordinator::TruncateTable(const std::string& keyspace, const std::string& name,
                                  const RequestConsistency& consistency) {
  if (!replicated()) return db_->TruncateTable(keyspace, name);
  TESSERA_ASSIGN_OR_RETURN(auto table, db_->catalog().GetTable(keyspace, name));
  for (const std::string& derived : Database::TruncatedWith(*table)) {
    Status s = TruncateTable(keyspace, derived, consistency);
    if (!s.ok() && !s.IsNotFound()) return s;
  }
  db_->large_partitions().ForgetTable(table->id);
  auto map = db_->TabletsOf(table->id);
  if (!map) return Status::NotFound("table " + keyspace + "." + name + " was dropped");
  for (const Tablet& t : map->tablets()) {
    WriteSet ws;
    ws.DeleteRange(t.start, t.end);
    TESSERA_RETURN_IF_ERROR(ReplicaOf(table, t)->Apply(ws, consistency));
  }
  return Status::OK();
}

}  // namespace tessera
