// ReplicatedTablet's write path (cluster/replicated_tablet.h): plain writes
// sent to every replica without waiting (ReplicateAsync), counter increments
// through a leader, and Paxos proposals through their round.
#include <algorithm>
#include <functional>
#include <mutex>

#include "cluster/replica_reads.h"
#include "cluster/replica_service.h"
#include "cluster/replicated_tablet.h"
#include "cluster/replicated_tablet_internal.h"
#include "common/blocking_wait.h"
#include "db/database.h"
#include "storage/counter_shards.h"

namespace tessera::cluster {

void ReplicatedTablet::ApplyThroughPaxosAsync(const WriteSet& writes, const RequestConsistency& consistency,
                                              std::function<void(Status)> done) {
  PaxosRound* round = consistency.paxos;
  // Held until the commit is acknowledged or timed out, as ApplyAsync's.
  auto fence = std::make_shared<PlacementFence::RequestGuard>(&services_->placement_fence);
  Result<PaxosPlan> plan = PlanPaxos(round->serial, consistency.level);
  if (!plan.ok()) return done(plan.status());
  auto coordinator = std::make_shared<PaxosCoordinator>(
      services_, table_->uuid, RelativeKey(table_->id, round->partition).value_or(std::string()),
      std::move(plan->participants), plan->required);
  coordinator->ProposeAndCommitAsync(
      round->ballot, ToRelative(table_->id, writes), consistency, plan->commit_block_for, round->serial,
      [services = services_, coordinator, round, fence, done = std::move(done)](Status s, bool preempted) {
        services->paxos_round_trips += coordinator->round_trips();
        if (s.code() == Status::Code::kWriteTimeout) ++services->write_timeouts;
        if (!preempted) return done(std::move(s));
        round->preempted = true;
        ++services->paxos_preempted;
        done(Status::Busy("the Paxos proposal was preempted by a later ballot"));
      });
}

namespace {

// Whether `writes` (of a counter table) carry increments a leader must turn
// into counter shards (storage/counter_shards.h).
bool CarriesCounterIncrements(const WriteSet& writes) {
  return std::any_of(writes.ops().begin(), writes.ops().end(), [](const WriteSet::Op& op) {
    RowFragment row;
    return op.kind == WriteSet::Op::kMerge && !op.value.empty() &&
           op.value[0] == static_cast<char>(kValueTypeRowFragment) && DecodeRowFragment(op.value, &row).ok() &&
           HasCounterIncrements(row);
  });
}

}  // namespace

Result<ReplicatedTablet::WritePlan> ReplicatedTablet::PlanWrite(ConsistencyLevel level, bool hints) {
  TESSERA_ASSIGN_OR_RETURN(TabletReplicas tablet, PlacementTablet());
  const WriteReplicaSet set = WriteReplicas(tablet.replicas, tablet.transition);
  WritePlan out;
  out.targets = TargetsOf(set.natural);
  CountCoordinated(out.targets);
  std::vector<ReplicaTarget> infos;
  for (const auto& t : out.targets) infos.push_back(t.info);
  TESSERA_ASSIGN_OR_RETURN(out.plan, PlanConsistency(level, infos, services_->local_dc, /*write=*/true));
  out.natural = out.targets.size();
  // A pending replica gets every write and must acknowledge it too.
  for (Target& t : TargetsOf(set.pending)) {
    infos.push_back(t.info);
    out.targets.push_back(std::move(t));
    out.plan.counts.push_back(true);
    if (level != ConsistencyLevel::kAny) ++out.plan.block_for;
  }
  // ANY: a stored hint is an acknowledgement, so no replica need be alive.
  if (!(level == ConsistencyLevel::kAny && hints)) {
    Status alive = CheckAlive(level, out.plan, infos);
    if (!alive.ok()) {
      ++services_->unavailables;
      return alive;
    }
  }
  return out;
}

namespace {

// The acknowledgements of one write, answered once: when `needed` are in
// (targets that succeeded, plus the hints that count at ANY) or every
// target sent to answered, whichever comes first. Every remote call ends by
// its deadline, so one of them always comes.
struct WriteAcks {
  std::mutex mu;
  int needed = 0, sent = 0, answered = 0, succeeded = 0, hint_acks = 0;
  bool armed = false, finished = false;
  std::function<void(int acknowledged)> on_done;

  void Record(bool ok) {
    std::unique_lock<std::mutex> lock(mu);
    ++answered;
    succeeded += ok;
    MaybeFinish(lock);
  }
  // Called once every target was sent to (answers that came before wait for it).
  void Arm(int sent_to, int needed_acks, int hints_counted) {
    std::unique_lock<std::mutex> lock(mu);
    sent = sent_to;
    needed = needed_acks;
    hint_acks = hints_counted;
    armed = true;
    MaybeFinish(lock);
  }
  void MaybeFinish(std::unique_lock<std::mutex>& lock) {
    if (!armed || finished || (succeeded + hint_acks < needed && answered < sent)) return;
    finished = true;
    auto done = std::move(on_done);
    const int acks = succeeded + hint_acks;
    lock.unlock();
    done(acks);
  }
};


}  // namespace

void ReplicatedTablet::ReplicateAsync(const WritePlan& w, const WriteSet& writes,
                                      std::shared_ptr<const WriteSet> relative, std::shared_ptr<HintStore> hints,
                                      const RequestConsistency& consistency, std::optional<size_t> stored_by,
                                      std::function<void(Status)> done) {
  const std::vector<Target>& targets = w.targets;
  auto acks = std::make_shared<WriteAcks>();
  // The answer is built from values alone: this tablet object may be gone
  // (a new tablet map) by the time the last replica answers.
  acks->on_done = [services = services_, consistency, block_for = w.plan.block_for,
                   done = std::move(done)](int acknowledged) {
    if (acknowledged >= block_for) return done(Status::OK());
    ++services->write_timeouts;
    done(ConsistencyTimeout(Status::Code::kWriteTimeout, consistency, acknowledged, block_for, false));
  };
  int sent = 0, hinted = 0;
  std::optional<size_t> local;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (i == stored_by) {
      ++sent;
      acks->Record(w.plan.counts[i]);
      continue;
    }
    if (!targets[i].info.alive) {
      const bool stored = hints && hints->Store(targets[i].info.host_id, table_->uuid, *relative).ok();
      hinted += stored;
      if (consistency.trace) {
        TraceStep(consistency, TracedPeer(targets[i]) + " is down: " + (stored ? "hint stored" : "no hint stored"));
      }
      continue;
    }
    ++sent;
    if (targets[i].info.local) {
      local = i;
      continue;
    }
    const bool counts = w.plan.counts[i];
    // A replica that fails or does not answer within the time-out gets a
    // hint, even when the level was reached without it.
    ReplicaLatency* latency = &services_->latency;
    latency->Sent(targets[i].info.host_id);
    if (consistency.trace) TraceStep(consistency, "Sending MUTATION message to " + TracedPeer(targets[i]));
    services_->client->Apply(targets[i].endpoint, table_->uuid, *relative, services_->write_timeout_micros,
                             consistency.trace, [acks, counts, hints, relative, host = targets[i].info.host_id, uuid = table_->uuid,
                              latency, at = NowMicros(), consistency, peer = TracedPeer(targets[i])](Status s) {
                               const int64_t now = NowMicros();
                               latency->Answered(host, now - at, s.ok(), now);
                               if (consistency.trace) {
                                 TraceStep(consistency, (s.ok() ? "MUTATION acknowledged by " + peer
                                                                : "MUTATION failed on " + peer + ": " + s.message()) +
                                                            " after " + std::to_string(now - at) + " us");
                               }
                               if (!s.ok() && hints) (void)hints->Store(host, uuid, *relative);
                               acks->Record(s.ok() && counts);
                             });
  }
  if (local) {
    services_->db->CountReplicaRequest(table_->id, start_, /*write=*/true, writes.bytes());
    Status s = services_->db->engine()->Write(writes);
    if (consistency.trace) {
      TraceStep(consistency, s.ok() ? "Mutation applied on this node's replica"
                                    : "Mutation failed on this node's replica: " + s.message());
    }
    acks->Record(s.ok() && w.plan.counts[*local]);
  }
  // ANY: a stored hint is an acknowledgement.
  acks->Arm(sent, w.plan.block_for, consistency.level == ConsistencyLevel::kAny ? hinted : 0);
}

std::shared_ptr<HintStore> ReplicatedTablet::HintsFor(const WriteSet& writes) const {
  // A range delete (TRUNCATE) carries no timestamp: replayed late it would
  // remove newer writes, so it is never hinted (Cassandra does not hint
  // truncation either).
  std::shared_ptr<HintStore> hints = services_->hints;
  if (hints && std::any_of(writes.ops().begin(), writes.ops().end(),
                           [](const WriteSet::Op& op) { return op.kind != WriteSet::Op::kMerge; })) {
    return nullptr;
  }
  return hints;
}

bool ReplicatedTablet::ThroughPaxos(const WriteSet& writes, const RequestConsistency& consistency) const {
  return consistency.paxos && !writes.empty() &&
         std::all_of(writes.ops().begin(), writes.ops().end(), [&](const WriteSet::Op& op) {
           return op.kind == WriteSet::Op::kMerge && op.key.starts_with(consistency.paxos->partition);
         });
}

Status ReplicatedTablet::Apply(const WriteSet& writes, const RequestConsistency& consistency) {
  return WaitFor<Status>([&](std::function<void(Status)> done) { ApplyAsync(writes, consistency, std::move(done)); });
}

void ReplicatedTablet::ApplyAsync(const WriteSet& writes, const RequestConsistency& consistency,
                                  std::function<void(Status)> done) {
  if (ThroughPaxos(writes, consistency)) return ApplyThroughPaxosAsync(writes, consistency, std::move(done));
  if (table_->HasCounters() && CarriesCounterIncrements(writes)) {
    return ApplyCounterWriteAsync(writes, consistency, std::move(done));
  }
  // Held until the write is acknowledged or timed out: a node applying a new
  // migration stage waits for writes routed by the previous one
  // (TabletMapSync) before it acknowledges the stage.
  auto fence = std::make_shared<PlacementFence::RequestGuard>(&services_->placement_fence);
  std::shared_ptr<HintStore> hints = HintsFor(writes);
  Result<WritePlan> w = PlanWrite(consistency.level, hints != nullptr);
  if (!w.ok()) return done(w.status());
  auto relative = std::make_shared<const WriteSet>(ToRelative(table_->id, writes));
  ReplicateAsync(*w, writes, std::move(relative), std::move(hints), consistency, std::nullopt,
                 [fence, done = std::move(done)](Status s) { done(std::move(s)); });
}

void ReplicatedTablet::ApplyCounterWriteAsync(const WriteSet& writes, const RequestConsistency& consistency,
                                              std::function<void(Status)> done) {
  if (consistency.level == ConsistencyLevel::kAny) {
    return done(Status::InvalidArgument("Consistency level ANY is not yet supported for counter table " +
                                        table_->name));
  }
  // Held until the shards are acknowledged or timed out, as ApplyAsync's.
  auto fence = std::make_shared<PlacementFence::RequestGuard>(&services_->placement_fence);
  Result<WritePlan> planned = PlanWrite(consistency.level, /*hints=*/false);
  if (!planned.ok()) return done(planned.status());
  auto w = std::make_shared<const WritePlan>(std::move(*planned));
  // The leader: this node when it is a live natural replica the level
  // counts, else the fastest such replica (Cassandra's
  // StorageProxy.findSuitableReplica).
  std::optional<size_t> leader;
  std::vector<std::string> remote;
  for (size_t i = 0; i < w->natural; ++i) {
    if (!w->targets[i].info.alive || !w->plan.counts[i]) continue;
    if (w->targets[i].info.local) leader = i;
    remote.push_back(w->targets[i].info.host_id);
  }
  if (!leader) {
    const std::vector<std::string> ordered = services_->latency.Order(remote, NowMicros());
    for (size_t i = 0; i < w->natural && !ordered.empty(); ++i) {
      if (w->targets[i].info.host_id == ordered.front()) leader = i;
    }
  }
  if (!leader) {
    ++services_->unavailables;
    return done(UnavailableError(consistency.level, 1, 0));
  }
  // The leader turns the increments into its shards and stores them; a
  // leader that does not answer leaves the outcome unknown (WriteTimeout,
  // never retried elsewhere: that could count the increment twice). Then
  // the shards go to every other replica, hinted when one misses them: a
  // shard delivered twice counts once. The continuation holds this tablet
  // when a shared_ptr owns it (the resolver's); else its caller is Apply,
  // which waits for the answer and keeps it alive.
  auto replicate = [this, self = weak_from_this().lock(), w, consistency, leader = *leader, fence,
                    done = std::move(done)](Result<WriteSet> shards) mutable {
    if (!shards.ok()) {
      if (shards.status().IsInvalidArgument() || shards.status().IsNotFound()) return done(shards.status());
      ++services_->write_timeouts;
      return done(ConsistencyTimeout(Status::Code::kWriteTimeout, consistency, 0, w->plan.block_for, false));
    }
    auto relative = std::make_shared<const WriteSet>(std::move(*shards));
    const WriteSet absolute = ToAbsolute(table_->id, *relative);
    ReplicateAsync(*w, absolute, std::move(relative), services_->hints, consistency, leader,
                   [fence, done = std::move(done)](Status s) { done(std::move(s)); });
  };
  const WriteSet relative_increments = ToRelative(table_->id, writes);
  const Target& lead = w->targets[*leader];
  if (lead.info.local) {
    return replicate(services_->local_replica_service
                         ? services_->local_replica_service->LeadCounterWrite(table_->uuid, relative_increments)
                         : Result<WriteSet>(Status::InvalidArgument("this node serves no replica requests")));
  }
  ReplicaLatency* latency = &services_->latency;
  latency->Sent(lead.info.host_id);
  services_->client->LeadCounterWrite(
      lead.endpoint, table_->uuid, relative_increments, services_->write_timeout_micros,
      [latency, host = lead.info.host_id, at = NowMicros(), replicate = std::move(replicate)](
          Result<WriteSet> r) mutable {
        const int64_t now = NowMicros();
        latency->Answered(host, now - at, r.ok(), now);
        replicate(std::move(r));
      });
}

}  // namespace tessera::cluster
