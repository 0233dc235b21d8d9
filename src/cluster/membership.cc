#include "cluster/membership.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/thread_name.h"

namespace tessera::cluster {
namespace {

// The host id of a key under `prefix`, or empty for any other key.
std::string HostIdOf(const std::string& key, const std::string& prefix) {
  if (key.compare(0, prefix.size(), prefix) != 0) return {};
  auto id = UuidFromText(key.substr(prefix.size()));
  return id.ok() ? *id : std::string();
}

}  // namespace

Membership::Membership(MembershipOptions options, Listener listener)
    : options_(std::move(options)), listener_(std::move(listener)),
      etcd_(std::make_unique<EtcdClient>(options_.etcd_endpoint)) {}

Result<std::unique_ptr<Membership>> Membership::Start(const MembershipOptions& options, Listener listener) {
  if (options.self.host_id.size() != 16) return Status::InvalidArgument("a node needs a 16-byte host id");
  if (options.lease_ttl_seconds < 2) return Status::InvalidArgument("the lease TTL is at least 2 seconds");
  std::unique_ptr<Membership> m(new Membership(options, std::move(listener)));
  TESSERA_RETURN_IF_ERROR(m->Register());
  TESSERA_RETURN_IF_ERROR(m->LoadAndWatch());
  m->keepalive_ = std::thread([raw = m.get()] {
    SetCurrentThreadName("etcd-lease");
    raw->KeepAlive();
  });
  return m;
}

Membership::~Membership() { Stop(); }

void Membership::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !keepalive_.joinable() && !watch_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (keepalive_.joinable()) keepalive_.join();
  if (watch_) watch_->Stop();
  watch_.reset();
  if (lease_ != 0) {
    if (Status s = etcd_->LeaseRevoke(lease_); !s.ok()) spdlog::warn("membership: revoking the lease: {}", s.ToString());
    lease_ = 0;
  }
}

Status Membership::Register() {
  const NodeRecord& self = options_.self;
  const std::string id = UuidText(self.host_id);
  TESSERA_ASSIGN_OR_RETURN(auto nodes, etcd_->Range(kNodesPrefix, EtcdPrefixEnd(kNodesPrefix)));
  std::vector<EtcdOp> ops;
  for (const auto& kv : nodes.kvs) {
    auto other = DecodeNodeRecord(kv.value);
    if (!other.ok() || other->host_id == self.host_id || other->address != self.address) continue;
    TESSERA_ASSIGN_OR_RETURN(auto alive, etcd_->Range(kAlivePrefix + UuidText(other->host_id)));
    if (!alive.kvs.empty()) {
      return Status::AlreadyExists("node " + UuidText(other->host_id) + " is alive at address " + self.address);
    }
    // A node at this address with another host id is down: its data
    // directory was replaced, and this node takes its place.
    spdlog::warn("membership: node {} at {} is down; node {} replaces it", UuidText(other->host_id), self.address, id);
    ops.push_back(EtcdOp::Delete(kv.key));
  }
  TESSERA_ASSIGN_OR_RETURN(lease_, etcd_->LeaseGrant(options_.lease_ttl_seconds));
  ops.push_back(EtcdOp::Put(kNodesPrefix + id, EncodeNodeRecord(self)));
  published_version_ = CurrentSchemaVersionText();
  ops.push_back(EtcdOp::Put(kAlivePrefix + id, published_version_, lease_));
  TESSERA_ASSIGN_OR_RETURN(auto txn, etcd_->Txn({}, ops));
  (void)txn;
  spdlog::info("membership: node {} ({}:{}, {} / {}) registered in etcd at {}", id, self.address, self.cql_port,
               self.data_center, self.rack, options_.etcd_endpoint.url);
  return Status::OK();
}

Status Membership::LoadAndWatch() {
  TESSERA_ASSIGN_OR_RETURN(auto all, etcd_->Range(kClusterPrefix, EtcdPrefixEnd(kClusterPrefix)));
  std::map<std::string, MemberState> loaded;
  std::map<std::string, std::string> alive;  // host id -> schema version
  for (const auto& kv : all.kvs) {
    if (std::string id = HostIdOf(kv.key, kNodesPrefix); !id.empty()) {
      auto record = DecodeNodeRecord(kv.value);
      if (record.ok()) loaded[id].record = *record;
    } else if (std::string live = HostIdOf(kv.key, kAlivePrefix); !live.empty()) {
      auto version = UuidFromText(kv.value);
      alive[live] = version.ok() ? *version : std::string();
    }
  }
  std::vector<MembershipEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool first = members_.empty();
    for (auto& [id, state] : loaded) {
      auto it = alive.find(id);
      state.alive = state.leased = it != alive.end();
      if (state.alive) state.schema_version = it->second;
      if (options_.liveness_from_failure_detector && !first && id != options_.self.host_id) {
        // Liveness stays what the detector said; a newcomer is down until heard from.
        auto known = members_.find(id);
        state.alive = known != members_.end() && known->second.alive;
      }
    }
    for (const auto& [id, state] : loaded) {
      auto it = members_.find(id);
      if (first || id == options_.self.host_id) continue;
      if (it == members_.end()) {
        events.push_back({MembershipEvent::Kind::kNewNode, state.record});
        if (state.alive) events.push_back({MembershipEvent::Kind::kUp, state.record});
      } else if (it->second.alive != state.alive) {
        events.push_back({state.alive ? MembershipEvent::Kind::kUp : MembershipEvent::Kind::kDown, state.record});
      }
    }
    for (const auto& [id, state] : members_) {
      if (!loaded.count(id)) events.push_back({MembershipEvent::Kind::kRemovedNode, state.record});
    }
    members_ = std::move(loaded);
  }
  for (const auto& e : events) listener_(e);
  watch_ = std::make_unique<EtcdWatch>(
      options_.etcd_endpoint, kClusterPrefix, EtcdPrefixEnd(kClusterPrefix), all.revision + 1,
      [this](const std::vector<EtcdWatchEvent>& batch, int64_t) { Apply(batch); },
      [this](int64_t) { OnCompacted(); });
  watch_->Start();
  return Status::OK();
}

void Membership::Apply(const std::vector<EtcdWatchEvent>& batch) {
  std::vector<MembershipEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& e : batch) {
      const bool put = e.type == EtcdWatchEvent::Type::kPut;
      if (std::string id = HostIdOf(e.kv.key, kNodesPrefix); !id.empty()) {
        auto it = members_.find(id);
        if (put) {
          auto record = DecodeNodeRecord(e.kv.value);
          if (!record.ok()) continue;
          if (it == members_.end()) {
            members_[id].record = *record;
            // A newcomer's liveness key may have come first (same transaction).
            if (options_.liveness_from_failure_detector && id != options_.self.host_id) members_[id].alive = false;
            if (id != options_.self.host_id) events.push_back({MembershipEvent::Kind::kNewNode, *record});
          } else {
            it->second.record = *record;
          }
        } else if (it != members_.end()) {
          if (id != options_.self.host_id) events.push_back({MembershipEvent::Kind::kRemovedNode, it->second.record});
          members_.erase(it);
        }
      } else if (std::string live = HostIdOf(e.kv.key, kAlivePrefix); !live.empty()) {
        auto it = members_.find(live);
        if (it == members_.end()) continue;
        auto version = UuidFromText(e.kv.value);
        it->second.leased = put;
        // Without the key the version is unknown (null in system.peers, which
        // drivers leave out of schema agreement).
        it->second.schema_version = put && version.ok() ? *version : std::string();
        // Under the failure detector the key says nothing of liveness (leases
        // expire together when etcd stalls).
        if (options_.liveness_from_failure_detector && live != options_.self.host_id) continue;
        if (it->second.alive == put) continue;
        it->second.alive = put;
        if (live != options_.self.host_id) {
          events.push_back({put ? MembershipEvent::Kind::kUp : MembershipEvent::Kind::kDown, it->second.record});
        }
      }
    }
  }
  for (const auto& e : events) listener_(e);
}

std::string Membership::CurrentSchemaVersionText() const {
  return options_.schema_version ? UuidText(options_.schema_version()) : std::string();
}

void Membership::NotifySchemaChanged() {
  std::lock_guard<std::mutex> lock(mu_);
  publish_ = true;
  wake_.notify_all();
}

void Membership::OnCompacted() {
  std::lock_guard<std::mutex> lock(mu_);
  reload_ = true;
  wake_.notify_all();
}

void Membership::KeepAlive() {
  const auto period = std::chrono::milliseconds(options_.lease_ttl_seconds * 1000 / 3);
  const std::string alive_key = kAlivePrefix + UuidText(options_.self.host_id);
  bool warned = false;
  for (;;) {
    bool reload = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, period, [&] { return stopping_ || reload_ || publish_; });
      if (stopping_) return;
      reload = reload_;
      reload_ = false;
      publish_ = false;
    }
    if (std::string version = CurrentSchemaVersionText(); version != published_version_) {
      if (etcd_->Put(alive_key, version, lease_).ok()) published_version_ = version;
    }
    if (reload) {
      watch_->Stop();
      if (Status s = LoadAndWatch(); !s.ok()) {
        spdlog::warn("membership: reloading members: {}", s.ToString());
        std::lock_guard<std::mutex> lock(mu_);
        reload_ = true;
      }
    }
    auto ttl = etcd_->LeaseKeepAlive(lease_);
    if (ttl.ok()) {
      if (warned) spdlog::info("membership: etcd reachable again");
      warned = false;
      continue;
    }
    if (ttl.status().code() == Status::Code::kNotFound) {
      // The lease expired while this node lived: take a new one and say so again.
      auto lease = etcd_->LeaseGrant(options_.lease_ttl_seconds);
      if (lease.ok() && etcd_->Put(alive_key, published_version_, *lease).ok()) {
        spdlog::warn("membership: lease expired; alive again under a new lease");
        lease_ = *lease;
        continue;
      }
    }
    if (!warned) spdlog::warn("membership: renewing the lease: {}", ttl.status().ToString());
    warned = true;
  }
}

void Membership::SetReachable(const std::string& host_id, bool reachable) {
  if (!options_.liveness_from_failure_detector || host_id == options_.self.host_id) return;
  std::optional<MembershipEvent> event;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = members_.find(host_id);
    if (it == members_.end() || it->second.alive == reachable) return;
    it->second.alive = reachable;
    event = MembershipEvent{reachable ? MembershipEvent::Kind::kUp : MembershipEvent::Kind::kDown, it->second.record};
  }
  listener_(*event);
}

std::vector<MemberState> Membership::Members() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<MemberState> out;
  for (const auto& [id, state] : members_) out.push_back(state);
  return out;
}

std::optional<MemberState> Membership::Member(const std::string& host_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = members_.find(host_id);
  if (it == members_.end()) return std::nullopt;
  return it->second;
}

}  // namespace tessera::cluster
