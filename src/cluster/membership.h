// Membership: this node's place in the cluster, kept in etcd (key layout in
// node_record.h), and the view of every member it watches there.
//
// Start registers the node: its NodeRecord under /tessera/nodes/ and its
// liveness key under /tessera/alive/ bound to a lease of lease_ttl_seconds,
// renewed every third of it by a thread of its own. A lease that expired
// anyway (the process was stopped, etcd lost it) is replaced and the
// liveness key written again. Start then reads every member and watches
// /tessera/ for changes, reporting them to the listener as Cassandra's
// events name them: a new member (NEW_NODE), a member gone (REMOVED_NODE), a
// member coming up (UP) and going down (DOWN).
//
// The liveness key's value is the node's schema version (uuid text), which
// system.peers reports so that drivers can wait for schema agreement.
//
// Stop revokes the lease (the others see this node DOWN at once, or, when
// they run a failure detector, once its pings go unanswered) and stops
// both threads; it is explicit, and the destructor calls it.
//
// Errors from Start: InvalidArgument for a host id that is not 16 bytes or
// a lease TTL under 2 s; IOError when etcd is unreachable; AlreadyExists
// when another live node holds the same address.
//
// Thread safety: Members(), the accessors and SetReachable from any thread;
// the listener runs on the watch thread (or SetReachable's caller), never
// under Membership's lock. Start/Stop from one thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/etcd_client.h"
#include "cluster/node_record.h"

namespace tessera::cluster {

struct MemberState {
  NodeRecord record;
  bool alive = false;   // up, as this node sees it (the failure detector's verdict, or the lease's)
  bool leased = false;  // its liveness key is in etcd: its process renews its lease
  std::string schema_version;  // 16 bytes as the node last published it; empty when down
};

struct MembershipEvent {
  enum class Kind { kNewNode, kRemovedNode, kUp, kDown };
  Kind kind = Kind::kNewNode;
  NodeRecord node;
};

struct MembershipOptions {
  EtcdEndpoint etcd_endpoint;  // "http://127.0.0.1:2379"
  NodeRecord self;
  int lease_ttl_seconds = 5;  // a killed node is DOWN after at most this long
  // This node's schema version (16 bytes), published as the value of its
  // liveness key at start, on NotifySchemaChanged and whenever it differs
  // at a lease renewal. Called on the keep-alive thread.
  std::function<std::string()> schema_version;
  // Issue 29: when true, a member's liveness (MemberState::alive, UP and
  // DOWN) is what this node sees of it, reported through SetReachable by
  // the failure detector (cluster/failure_detector.h); the liveness keys
  // then only say who joined and carry schema versions, so an etcd stall
  // that expires every lease marks nobody down. A member is taken as alive
  // at start when its liveness key exists, and as down when it joins later,
  // until the detector hears from it. When false, liveness is the lease's.
  bool liveness_from_failure_detector = false;
};

class Membership {
 public:
  using Listener = std::function<void(const MembershipEvent&)>;
  static Result<std::unique_ptr<Membership>> Start(const MembershipOptions& options, Listener listener);
  ~Membership();  // Stop()
  void Stop();

  // Publishes the schema version now (after DDL) instead of at the next renewal.
  void NotifySchemaChanged();
  // Every member, this node included, ordered by host id.
  std::vector<MemberState> Members() const;
  // The failure detector's verdict on a member (ignored for this node, for
  // non-members, and unless liveness_from_failure_detector): an UP or DOWN
  // event when it changes the member's liveness.
  void SetReachable(const std::string& host_id, bool reachable);
  // One member by host id (16 bytes); nullopt when not a member.
  std::optional<MemberState> Member(const std::string& host_id) const;
  const NodeRecord& self() const { return options_.self; }
  EtcdClient& etcd() { return *etcd_; }

 private:
  Membership(MembershipOptions options, Listener listener);
  Status Register();
  Status LoadAndWatch();
  void KeepAlive();
  void Apply(const std::vector<EtcdWatchEvent>& events);
  void OnCompacted();
  std::string CurrentSchemaVersionText() const;

  const MembershipOptions options_;
  const Listener listener_;
  std::unique_ptr<EtcdClient> etcd_;
  int64_t lease_ = 0;  // owned by the keep-alive thread after Start

  mutable std::mutex mu_;
  std::map<std::string, MemberState> members_;  // by host id; guarded by mu_
  bool stopping_ = false;                       // guarded by mu_
  bool reload_ = false;                         // the watch fell behind a compaction; guarded by mu_
  bool publish_ = false;                        // NotifySchemaChanged was called; guarded by mu_
  std::string published_version_;               // keep-alive thread only
  std::condition_variable wake_;
  std::thread keepalive_;
  std::unique_ptr<EtcdWatch> watch_;
};

}  // namespace tessera::cluster
