#include "cluster/replicated_tablet.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>

#include <spdlog/spdlog.h>

#include "cluster/replica_reads.h"
#include "cluster/replicated_tablet_internal.h"
#include "cluster/replica_service.h"
#include "storage/counter_shards.h"
#include "types/speculative_retry.h"
#include "db/database.h"
#include "storage/merge_operator.h"
#include "tracing/trace_session.h"

namespace tessera::cluster {

Result<std::string> Reconcile(const std::vector<const std::string*>& values) {
  const std::string* first = nullptr;
  bool all_equal = true;
  std::vector<std::string_view> views;
  for (const std::string* v : values) {
    if (!v) continue;
    if (first && *v != *first) all_equal = false;
    if (!first) first = v;
    views.push_back(*v);
  }
  if (all_equal) return *first;
  std::string merged;
  TESSERA_RETURN_IF_ERROR(MergeStoredValues(std::nullopt, views, &merged));
  return merged;
}

const KeysAnswer* AgreedData(const std::vector<KeysAnswer>& answers, size_t keys) {
  const KeysAnswer* data = nullptr;
  for (const auto& a : answers) {
    if (!a.digest) data = &a;
  }
  if (data == nullptr) return nullptr;
  for (size_t k = 0; k < keys; ++k) {
    const std::optional<std::string>& value = data->values[k];
    std::optional<std::string> digest;
    if (value) digest = ValueDigest(*value);
    for (const auto& a : answers) {
      if (a.values.size() != keys || a.values[k].has_value() != value.has_value() ||
          (value && a.values[k] != (a.digest ? *digest : *value))) {
        return nullptr;
      }
    }
  }
  return data;
}

Status ReconcileKeyAnswers(const std::vector<std::string>& keys,
                           const std::vector<std::vector<std::optional<std::string>>>& answers,
                           std::vector<std::optional<std::string>>* out, std::vector<WriteSet>* repairs) {
  out->assign(keys.size(), std::nullopt);
  repairs->assign(answers.size(), WriteSet());
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<const std::string*> values(answers.size(), nullptr);
    bool any = false;
    for (size_t i = 0; i < answers.size(); ++i) {
      if (k < answers[i].size() && answers[i][k]) {
        values[i] = &*answers[i][k];
        any = true;
      }
    }
    if (!any) continue;
    TESSERA_ASSIGN_OR_RETURN(std::string value, Reconcile(values));
    for (size_t i = 0; i < answers.size(); ++i) {
      if (!values[i] || *values[i] != value) (*repairs)[i].Merge(keys[k], value);
    }
    (*out)[k] = std::move(value);
  }
  return Status::OK();
}

ReplicatedTablet::ReplicatedTablet(ReplicationServices* services, std::shared_ptr<const TableSchema> table,
                                   std::string start, std::string end)
    : services_(services), table_(std::move(table)), start_(std::move(start)), end_(std::move(end)) {
  // Refused at CREATE / ALTER when it does not parse; an older schema's reads as '99p'.
  auto it = table_->options.extra.find("speculative_retry");
  auto policy = ParseSpeculativeRetry(it == table_->options.extra.end() ? "99p" : it->second);
  if (policy.ok()) speculative_retry_ = *policy;
}

std::vector<std::string> ReplicatedTablet::Hosts() {
  auto placement = services_->placements->Cached(table_->uuid);
  if (!placement) return {};
  const TabletReplicas* holder = PlacementOf(*placement, RelativeKey(table_->id, start_).value_or(std::string()));
  return holder ? holder->replicas : std::vector<std::string>{};
}

bool ReplicatedTablet::StoredHere() {
  const auto hosts = Hosts();
  return std::find(hosts.begin(), hosts.end(), services_->self_host_id) != hosts.end();
}

Result<std::optional<std::vector<std::string>>> ReplicatedTablet::SearchVectors(const std::string& index,
                                                                                const std::vector<float>& query,
                                                                                size_t k) {
  if (StoredHere()) return std::optional<std::vector<std::string>>();
  TESSERA_ASSIGN_OR_RETURN(std::vector<Target> targets, Targets());
  ConsistencyPlan plan;
  TESSERA_ASSIGN_OR_RETURN(std::vector<const Target*> ordered, ChooseReadTargets(targets, ConsistencyLevel::kOne, &plan));
  VectorSearchQuery q;
  q.table_uuid = table_->uuid;
  q.index = index;
  q.query = query;
  q.k = static_cast<uint32_t>(std::min<size_t>(k, UINT32_MAX));
  q.ranges.emplace_back(RelativeKey(table_->id, start_).value_or(std::string()),
                        RelativeKey(table_->id, end_).value_or(std::string()));
  Status last = Status::IOError("no replica of the tablet answered");
  for (const Target* t : ordered) {  // the fastest first; the next when one fails
    if (t->endpoint.empty()) return std::optional<std::vector<std::string>>();
    std::promise<Result<std::vector<std::string>>> answered;
    auto answer = answered.get_future();
    services_->client->VectorSearch(t->endpoint, q, services_->read_timeout_micros,
                                    [&answered](Result<std::vector<std::string>> r) { answered.set_value(std::move(r)); });
    auto keys = answer.get();
    if (!keys.ok()) {
      last = keys.status();
      continue;
    }
    std::vector<std::string> absolute;
    for (const auto& key : *keys) absolute.push_back(AbsoluteKey(table_->id, key));
    return std::optional<std::vector<std::string>>(std::move(absolute));
  }
  return last;
}

Result<std::shared_ptr<const std::vector<TabletReplicas>>> ResolvePlacement(ReplicationServices* s,
                                                                            std::shared_ptr<const TableSchema> table) {
  auto make = [s, table]() -> Result<std::vector<TabletReplicas>> {
    TESSERA_ASSIGN_OR_RETURN(KeyspaceMetadata ks, s->db->catalog().GetKeyspace(table->keyspace));
    TESSERA_ASSIGN_OR_RETURN(ReplicationFactors factors, ParseReplication(ks.replication));
    std::vector<PlacementNode> nodes;
    for (const auto& m : s->membership->Members()) {
      nodes.push_back({m.record.host_id, m.record.data_center, m.record.rack});
    }
    std::vector<TabletReplicas> placement;
    const auto tablets = s->db->Tablets(*table);
    for (size_t i = 0; i < tablets.size(); ++i) {
      TabletReplicas t;
      t.start = RelativeKey(table->id, tablets[i].start).value_or(std::string());
      t.end = RelativeKey(table->id, tablets[i].end).value_or(std::string());
      TESSERA_ASSIGN_OR_RETURN(t.replicas, PlaceReplicas(factors, nodes, i, s->local_dc));
      placement.push_back(std::move(t));
    }
    return placement;
  };
  return s->placements->Get(table->uuid, make);
}

Result<TabletReplicas> ReplicatedTablet::PlacementTablet() {
  // Read per request (the cached placement, a shared pointer): a migration
  // changes a tablet's replicas and stage while this object lives.
  TESSERA_ASSIGN_OR_RETURN(auto placement, ResolvePlacement(services_, table_));
  // This node's tablet may not have applied a split of the placement yet:
  // the placement tablet holding its start has the same replicas as every
  // placement tablet within it (a split keeps the replicas, and a tablet
  // in transition neither splits nor merges).
  const std::string relative_start = RelativeKey(table_->id, start_).value_or(std::string());
  const TabletReplicas* holder = PlacementOf(*placement, relative_start);
  if (!holder) {
    return Status::Corruption("table " + table_->keyspace + "." + table_->name +
                              ": no tablet of its placement in etcd holds this node's tablet");
  }
  return *holder;
}

Result<std::vector<std::string>> ReplicatedTablet::Replicas() {
  TESSERA_ASSIGN_OR_RETURN(TabletReplicas tablet, PlacementTablet());
  return tablet.replicas;
}

Result<std::vector<ReplicatedTablet::Target>> ReplicatedTablet::Targets() {
  TESSERA_ASSIGN_OR_RETURN(TabletReplicas tablet, PlacementTablet());
  return TargetsOf(ReadReplicas(tablet.replicas, tablet.transition));
}

void ReplicatedTablet::CountCoordinated(const std::vector<Target>& targets) {
  services_->coordinated.fetch_add(1, std::memory_order_relaxed);
  if (std::none_of(targets.begin(), targets.end(), [](const Target& t) { return t.info.local; })) {
    services_->forwarded.fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<ReplicatedTablet::Target> ReplicatedTablet::TargetsOf(const std::vector<std::string>& replicas) {
  std::vector<Target> targets;
  for (const auto& host : replicas) {
    Target t;
    t.info.host_id = host;
    if (host == services_->self_host_id) {
      t.info.data_center = services_->local_dc;
      t.info.alive = true;
      t.info.local = true;
    } else if (auto m = services_->membership->Member(host)) {
      t.info.data_center = m->record.data_center;
      t.info.alive = m->alive && m->record.internode_port > 0;
      t.endpoint = m->record.address + ":" + std::to_string(m->record.internode_port);
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

Result<ReplicatedTablet::PaxosPlan> ReplicatedTablet::PlanPaxos(ConsistencyLevel serial,
                                                                 std::optional<ConsistencyLevel> commit) {
  if (serial != ConsistencyLevel::kSerial && serial != ConsistencyLevel::kLocalSerial) {
    return Status::InvalidArgument(std::string("Invalid consistency for conditional update: ") +
                                   ConsistencyLevelName(serial) + ", must be one of SERIAL or LOCAL_SERIAL");
  }
  TESSERA_ASSIGN_OR_RETURN(TabletReplicas tablet, PlacementTablet());
  const WriteReplicaSet set = WriteReplicas(tablet.replicas, tablet.transition);
  const std::vector<Target> natural = TargetsOf(set.natural);
  const std::vector<Target> pending = TargetsOf(set.pending);
  CountCoordinated(natural);
  std::vector<ReplicaTarget> infos;
  for (const auto& t : natural) infos.push_back(t.info);
  TESSERA_ASSIGN_OR_RETURN(ConsistencyPlan plan, PlanConsistency(serial, infos, services_->local_dc, /*write=*/false));
  // A pending replica (a migration's target) takes part in every round, as
  // Cassandra counts pending endpoints into the Paxos quorum.
  PaxosPlan out;
  out.required = plan.block_for + static_cast<int>(pending.size());
  for (size_t i = 0; i < natural.size(); ++i) {
    if (natural[i].info.alive && plan.counts[i]) {
      out.participants.push_back({natural[i].info.host_id, natural[i].endpoint, natural[i].info.local});
    }
  }
  for (const auto& t : pending) {
    if (t.info.alive) out.participants.push_back({t.info.host_id, t.endpoint, t.info.local});
  }
  if (static_cast<int>(out.participants.size()) < out.required) {
    ++services_->unavailables;
    Status::ReplicaShortfall f;
    f.consistency = static_cast<uint16_t>(serial);
    f.first = out.required;
    f.second = static_cast<int>(out.participants.size());
    return Status::ConsistencyFailure(Status::Code::kUnavailable,
                                      std::string("Cannot achieve consistency level ") + ConsistencyLevelName(serial),
                                      f);
  }
  if (commit) {
    // The commit waits for as many as the statement's own level needs (ANY:
    // one), pending replicas included.
    const ConsistencyLevel level = *commit == ConsistencyLevel::kAny ? ConsistencyLevel::kOne : *commit;
    TESSERA_ASSIGN_OR_RETURN(ConsistencyPlan commit_plan, PlanConsistency(level, infos, services_->local_dc, true));
    out.commit_block_for = commit_plan.block_for + static_cast<int>(pending.size());
  }
  return out;
}

void ReplicatedTablet::BeginPaxosAsync(std::string_view partition, ConsistencyLevel serial, bool for_read,
                                       PaxosBegun done) {
  Result<PaxosPlan> plan = PlanPaxos(serial, std::nullopt);
  if (!plan.ok()) return done(plan.status());
  auto coordinator = std::make_shared<PaxosCoordinator>(
      services_, table_->uuid, RelativeKey(table_->id, partition).value_or(std::string()),
      std::move(plan->participants), plan->required);
  // The answer is built from values alone: this tablet object may be gone
  // (a new tablet map) by the time the prepare completes.
  coordinator->PrepareAsync(serial, for_read, [services = services_, coordinator, position = std::string(partition),
                                               serial, done = std::move(done)](Result<std::string> ballot) {
    ++services->paxos_rounds;
    services->paxos_round_trips += coordinator->round_trips();
    if (!ballot.ok()) {
      if (ballot.status().code() == Status::Code::kWriteTimeout) ++services->write_timeouts;
      if (ballot.status().code() == Status::Code::kReadTimeout) ++services->read_timeouts;
      return done(ballot.status());
    }
    PaxosRound round;
    round.partition = position;
    round.ballot = *ballot;
    round.ballot_micros = BallotMicros(*ballot);
    round.serial = serial;
    done(std::optional<PaxosRound>(std::move(round)));
  });
}

Result<std::unique_ptr<ReplicatedTablet::ReadReplicaSet>> ReplicatedTablet::PlanRead(ConsistencyLevel level) {
  auto set = std::make_unique<ReadReplicaSet>();
  TESSERA_ASSIGN_OR_RETURN(set->all, Targets());
  TESSERA_ASSIGN_OR_RETURN(set->asked, ChooseReadTargets(set->all, level, &set->plan));
  return set;
}

Result<std::vector<const ReplicatedTablet::Target*>> ReplicatedTablet::ChooseReadTargets(
    const std::vector<Target>& targets, ConsistencyLevel level, ConsistencyPlan* plan) {
  std::vector<ReplicaTarget> infos;
  for (const auto& t : targets) infos.push_back(t.info);
  TESSERA_ASSIGN_OR_RETURN(*plan, PlanConsistency(level, infos, services_->local_dc, /*write=*/false));
  Status alive = CheckAlive(level, *plan, infos);
  if (!alive.ok()) {
    ++services_->unavailables;
    return alive;
  }
  std::vector<const Target*> candidates;
  std::vector<std::string> remote;
  std::map<std::string, const Target*> by_host;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!targets[i].info.alive || !plan->counts[i]) continue;
    if (targets[i].info.local) {
      candidates.push_back(&targets[i]);  // this node first: no hop
    } else {
      remote.push_back(targets[i].info.host_id);
      by_host[targets[i].info.host_id] = &targets[i];
    }
  }
  for (const auto& host : services_->latency.Order(remote, NowMicros())) candidates.push_back(by_host[host]);
  return candidates;
}

int64_t ReplicatedTablet::SpeculativeThresholdMicros() {
  // Until the table has 100 reads here, 10 ms.
  return tessera::SpeculativeThresholdMicros(speculative_retry_, services_->db->MetricsOf(table_->id)->read_latency,
                                             10'000, services_->read_timeout_micros);
}

Status ReplicatedTablet::Repair(const std::vector<const Target*>& asked, const std::vector<WriteSet>& repairs,
                                const RequestConsistency& consistency) {
  auto gathered = std::make_shared<Gathered<Status>>(asked.size());
  int sent = 0;
  for (size_t i = 0; i < asked.size(); ++i) {
    if (repairs[i].empty()) continue;
    ++sent;
    services_->read_repairs += repairs[i].size();
    if (asked[i]->info.local) {
      Status s = ApplyLocal(services_->db->engine(), table_->id, repairs[i]);
      gathered->Record(i, s, s.ok());
      continue;
    }
    services_->client->Apply(asked[i]->endpoint, table_->uuid, repairs[i], services_->write_timeout_micros,
                             consistency.trace, [gathered, i](Status s) {
                               const bool ok = s.ok();
                               gathered->Record(i, std::move(s), ok);
                             });
  }
  if (sent == 0) return Status::OK();
  gathered->Wait(sent, sent, services_->write_timeout_micros);
  std::lock_guard<std::mutex> lock(gathered->mu);
  if (gathered->succeeded >= sent) return Status::OK();
  ++services_->read_timeouts;
  spdlog::warn("read repair of {}.{} was not acknowledged by every replica", table_->keyspace, table_->name);
  return ConsistencyTimeout(Status::Code::kReadTimeout, consistency,
                            static_cast<int>(asked.size()) - (sent - gathered->succeeded),
                            static_cast<int>(asked.size()), true);
}

template <typename T>
Result<std::vector<T>> ReplicatedTablet::AskAll(std::vector<const Target*>* asked, const ConsistencyPlan& plan,
                                                const RequestConsistency& consistency, const AskRemote<T>& remote,
                                                const std::function<Result<T>()>& local) {
  const std::vector<const Target*> candidates = std::move(*asked);
  const int n = static_cast<int>(candidates.size());
  const int block_for = std::min(plan.block_for, n);
  auto gathered = std::make_shared<Gathered<Result<T>>>(candidates.size());
  ReplicaLatency* latency = &services_->latency;
  int sent = 0;
  std::optional<int> self;
  auto send = [&](int i) {
    ++sent;
    if (candidates[i]->info.local) {
      self = i;  // asked after the remote ones are on their way
      return;
    }
    const std::string host = candidates[i]->info.host_id;
    latency->Sent(host);
    if (consistency.trace) TraceStep(consistency, "Sending RANGE message to " + TracedPeer(*candidates[i]));
    remote(candidates[i]->endpoint, [gathered, i, latency, host, at = NowMicros(), consistency,
                                     peer = TracedPeer(*candidates[i])](Result<T> r) {
      const bool ok = r.ok();
      const int64_t now = NowMicros();
      latency->Answered(host, now - at, ok, now);
      if (consistency.trace) {
        TraceStep(consistency,
                  (ok ? "RANGE answered by " + peer : "RANGE failed on " + peer + ": " + r.status().message()) +
                      " after " + std::to_string(now - at) + " us");
      }
      gathered->Record(static_cast<size_t>(i), std::move(r), ok);
    });
  };
  auto answer_self = [&] {
    if (!self) return;
    if (consistency.trace) TraceStep(consistency, "Reading a key range on this node's replica");
    Result<T> r = local();
    const bool ok = r.ok();
    gathered->Record(static_cast<size_t>(*self), std::move(r), ok);
    self.reset();
  };
  while (sent < block_for) send(sent);
  answer_self();
  const int64_t threshold = SpeculativeThresholdMicros();
  const int64_t start = NowMicros();
  const int64_t deadline = start + services_->read_timeout_micros;
  int64_t speculate_at = threshold < 0 ? -1 : start + threshold;
  while (true) {
    int more = 0;  // replicas to ask now
    {
      std::unique_lock<std::mutex> lock(gathered->mu);
      auto settled = [&] { return gathered->succeeded >= block_for || gathered->answered >= sent; };
      const int64_t before = NowMicros();
      const int64_t until = speculate_at >= 0 && sent < n ? std::min(deadline, speculate_at) : deadline;
      if (!settled() && until > before) {
        gathered->cv.wait_for(lock, std::chrono::microseconds(until - before), settled);
      }
      if (gathered->succeeded >= block_for) break;
      const int outstanding = sent - gathered->answered;
      const int missing = block_for - gathered->succeeded;
      const int64_t now = NowMicros();
      if (outstanding < missing) {  // error answers: those still out cannot make block_for
        if (threshold < 0 || sent == n) break;  // NONE asks no other replica, as Cassandra
        more = std::min(missing - outstanding, n - sent);
      } else if (speculate_at >= 0 && now >= speculate_at && sent < n) {
        more = 1;  // the speculative retry
        speculate_at = -1;
        for (int i = 0; i < sent; ++i) {
          if (!gathered->answers[i] && !candidates[i]->info.local) latency->Missed(candidates[i]->info.host_id, now);
        }
      } else if (now >= deadline) {
        break;
      }
    }
    if (more > 0) ++services_->speculative_retries;
    if (more > 0 && consistency.trace) {
      TraceStep(consistency, "Speculative retry: asking " + std::to_string(more) + " more " +
                                 (more == 1 ? "replica" : "replicas"));
    }
    for (int k = 0; k < more; ++k) send(sent);
    answer_self();
  }
  std::lock_guard<std::mutex> lock(gathered->mu);
  if (gathered->succeeded < block_for) {
    ++services_->read_timeouts;
    return ConsistencyTimeout(Status::Code::kReadTimeout, consistency, gathered->succeeded, plan.block_for,
                              gathered->succeeded > 0);
  }
  std::vector<T> answers;
  for (int i = 0; i < n; ++i) {
    auto& a = gathered->answers[i];
    if (!a || !a->ok()) continue;
    asked->push_back(candidates[i]);
    answers.push_back(std::move(a->value()));
  }
  return answers;
}

Result<KeyWindow> ReconcileRangeAnswers(uint32_t table_id, bool reverse, const std::vector<RangeBatch>& batches,
                                        std::vector<WriteSet>* repairs) {
  // Every replica's answer is complete up to the horizon: the nearest last
  // key among the answers the limit cut short.
  std::optional<std::string> horizon;
  bool more = false;
  for (const auto& b : batches) {
    if (!b.more || b.entries.empty()) continue;
    more = true;
    const std::string& last = b.entries.back().first;
    if (!horizon || (reverse ? last > *horizon : last < *horizon)) horizon = last;
  }
  std::map<std::string, std::vector<const std::string*>> keys;
  for (size_t i = 0; i < batches.size(); ++i) {
    for (const auto& [k, v] : batches[i].entries) {
      if (horizon && (reverse ? k < *horizon : k > *horizon)) break;
      auto& slot = keys[k];
      slot.resize(batches.size(), nullptr);
      slot[i] = &v;
    }
  }
  KeyWindow window;
  window.more = more;
  repairs->assign(batches.size(), WriteSet());
  auto add = [&](const std::string& key, std::vector<const std::string*>& values) -> Status {
    TESSERA_ASSIGN_OR_RETURN(std::string value, Reconcile(values));
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i] || *values[i] != value) (*repairs)[i].Merge(key, value);
    }
    window.entries.emplace_back(AbsoluteKey(table_id, key), std::move(value));
    return Status::OK();
  };
  if (reverse) {
    for (auto it = keys.rbegin(); it != keys.rend(); ++it) TESSERA_RETURN_IF_ERROR(add(it->first, it->second));
  } else {
    for (auto& [k, values] : keys) TESSERA_RETURN_IF_ERROR(add(k, values));
  }
  return window;
}

Result<KeyWindow> ReplicatedTablet::ReadWindow(const RangeQuery& query, const RequestConsistency& consistency) {
  // Held until answered (as a write's): cleanup waits for reads routed to
  // the leaving replica (PlacementFence).
  PlacementFence::RequestGuard fence(&services_->placement_fence);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ReadReplicaSet> read, PlanRead(consistency.level));
  CountCoordinated(read->all);
  std::vector<const Target*>& asked = read->asked;
  TESSERA_ASSIGN_OR_RETURN(
      std::vector<RangeBatch> batches,
      AskAll<RangeBatch>(
          &asked, read->plan, consistency,
          [&](const std::string& endpoint, std::function<void(Result<RangeBatch>)> done) {
            services_->client->ReadRange(endpoint, query, services_->read_timeout_micros, consistency.trace,
                                         std::move(done));
          },
          [&] {
            if (!query.internal) services_->db->CountReplicaRequest(table_->id, start_, /*write=*/false);
            return ReadRangeLocal(services_->db->engine(), table_->id, query);
          }));
  std::vector<WriteSet> repairs;
  TESSERA_ASSIGN_OR_RETURN(KeyWindow window, ReconcileRangeAnswers(table_->id, query.reverse, batches, &repairs));
  TESSERA_RETURN_IF_ERROR(Repair(asked, repairs, consistency));
  return window;
}

Status ReplicatedTablet::Get(std::string_view key, std::string* value, const RequestConsistency& consistency) {
  std::vector<std::string> values;
  std::vector<Status> statuses;
  MultiGet({key}, &values, &statuses, consistency);
  if (statuses[0].ok()) *value = std::move(values[0]);
  return statuses[0];
}

void ReplicatedTablet::MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                                std::vector<Status>* statuses, const RequestConsistency& consistency) {
  // The key read has one implementation, the asynchronous one; this caller
  // holds its thread until it answers.
  std::promise<std::pair<std::vector<std::string>, std::vector<Status>>> answered;
  auto answer = answered.get_future();
  MultiGetAsync(std::vector<std::string>(keys.begin(), keys.end()), consistency,
                [&answered](std::vector<std::string> v, std::vector<Status> st) {
                  answered.set_value({std::move(v), std::move(st)});
                });
  std::tie(*values, *statuses) = answer.get();
}

std::unique_ptr<KvIterator> ReplicatedTablet::NewIterator(std::string lower, std::string upper,
                                                          const RequestConsistency& consistency) {
  // One replica and it is this node: the storage iterator itself.
  auto read = PlanRead(consistency.level);
  if (read.ok() && (*read)->asked.size() == 1 && (*read)->asked.front()->info.local) {
    return services_->db->engine()->NewIterator(std::move(lower), std::move(upper));
  }
  RangeQuery base;
  base.table_uuid = table_->uuid;
  base.lower = RelativeKey(table_->id, lower).value_or(std::string());
  base.upper = upper.empty() ? std::string() : RelativeKey(table_->id, upper).value_or(std::string());
  base.limit = std::min(services_->first_read_window_keys, services_->read_window_keys);
  base.internal = consistency.internal;
  auto next_limit = std::make_shared<uint32_t>(base.limit);  // shared by the iterator's copies of `fetch`
  // The iterator reads its windows later, at the level it was made with,
  // and keeps this coordinator alive for them: one made for a request
  // (ClusterReplicaResolver) may be the caller's only reference. Null for
  // one not owned by a shared_ptr (repair's), whose owner outlives its reads.
  auto fetch = [this, self = weak_from_this().lock(), base, next_limit, consistency](const WindowRequest& w)
      -> Result<KeyWindow> {
    RangeQuery q = base;
    q.limit = *next_limit;
    *next_limit = std::min<uint32_t>(services_->read_window_keys, *next_limit * 4);
    q.from = RelativeKey(table_->id, w.from).value_or(std::string());
    q.from_inclusive = w.inclusive;
    q.reverse = w.reverse;
    q.from_end = w.from_end;
    return ReadWindow(q, consistency);
  };
  return std::make_unique<ReconcilingIterator>(std::move(lower), std::move(upper), std::move(fetch));
}

uint64_t ReplicatedTablet::ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables) {
  return services_->db->engine()->ApproximateSize(begin, end, include_memtables);
}

Result<std::string> ClusterReplicaResolver::PlacedBoundary(const TableSchema& table, const Tablet& tablet,
                                                            const std::string& boundary) {
  auto current = services_->db->catalog().GetTableById(table.id);
  if (!current) return Status::NotFound("table " + table.name + " is gone");
  // The placement exists once the table served a request; make sure.
  ReplicatedTablet replica(services_, current, tablet.start, tablet.end);
  TESSERA_RETURN_IF_ERROR(replica.Replicas().status());
  auto relative = RelativeKey(table.id, boundary);
  if (!relative || relative->empty()) return Status::InvalidArgument("tablet boundary outside the table");
  return *relative;
}

bool ClusterReplicaResolver::PlacementStartsAt(const TableSchema& table, const std::string& relative) {
  auto placement = services_->placements->Cached(table.uuid);
  return placement && std::any_of(placement->begin(), placement->end(),
                                  [&](const TabletReplicas& t) { return t.start == relative; });
}

Status ClusterReplicaResolver::BeforeSplit(const TableSchema& table, const Tablet& tablet, const std::string& split,
                                           const TabletChangeSource& source) {
  if (table.keyspace.starts_with("system")) return Status::OK();
  TESSERA_ASSIGN_OR_RETURN(std::string relative, PlacedBoundary(table, tablet, split));
  if (source.origin == TabletChangeOrigin::kPlacement) {
    return PlacementStartsAt(table, relative) ? Status::OK() : Status::NotFound("no longer in the placement");
  }
  return services_->placements->RecordSplit(table.uuid, relative, BalancerLeaderFence(source.leader_term)).status();
}

Status ClusterReplicaResolver::BeforeMerge(const TableSchema& table, const Tablet& left, const Tablet& right,
                                           const TabletChangeSource& source) {
  if (table.keyspace.starts_with("system")) return Status::OK();
  TESSERA_ASSIGN_OR_RETURN(std::string relative, PlacedBoundary(table, left, right.start));
  if (source.origin == TabletChangeOrigin::kPlacement) {
    return PlacementStartsAt(table, relative) ? Status::NotFound("the placement has this boundary again")
                                              : Status::OK();
  }
  return services_->placements->RecordMerge(table.uuid, relative, BalancerLeaderFence(source.leader_term)).status();
}

std::vector<std::string> ClusterReplicaResolver::Hosts(const TableSchema& table, const Tablet& tablet) {
  if (table.keyspace.starts_with("system")) return {};
  auto placement = services_->placements->Cached(table.uuid);
  if (!placement) return {};
  const TabletReplicas* holder = PlacementOf(*placement, RelativeKey(table.id, tablet.start).value_or(std::string()));
  return holder ? holder->replicas : std::vector<std::string>{};
}

bool ClusterReplicaResolver::StoredHere(const TableSchema& table, const Tablet& tablet) {
  if (table.keyspace.starts_with("system")) return true;
  const auto hosts = Hosts(table, tablet);
  return std::find(hosts.begin(), hosts.end(), services_->self_host_id) != hosts.end();
}

std::shared_ptr<Replica> ClusterReplicaResolver::ReplicaFor(const std::shared_ptr<const TableSchema>& table,
                                                            const Tablet& tablet) {
  if (table->keyspace.starts_with("system")) return nullptr;
  return std::make_shared<ReplicatedTablet>(services_, table, tablet.start, tablet.end);
}

void TraceStep(const RequestConsistency& consistency, std::string activity) {
  consistency.trace->Event(std::move(activity));
}

}  // namespace tessera::cluster
