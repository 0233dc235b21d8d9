#include "server/node.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "cluster/etcd_auth_store.h"
#include "cluster/failure_detector.h"
#include "cluster/membership.h"
#include "cluster/membership_view.h"
#include "cluster/migration_resumer.h"
#include "cluster/schema_log.h"
#include "cluster/cluster_metrics.h"
#include "cluster/cluster_status.h"
#include "cluster/hint_replayer.h"
#include "cluster/paxos_pruner.h"
#include "cluster/hint_store.h"
#include "cluster/internode_client.h"
#include "cluster/repair.h"
#include "cluster/in_memory_network.h"
#include "cluster/internode_service.h"
#include "cluster/replica_service.h"
#include "cluster/node_lifecycle.h"
#include "cluster/node_load.h"
#include "cluster/grpc_runtime.h"
#include "cluster/placement_balancer.h"
#include "cluster/tablet_resize.h"
#include "cluster/replicated_tablet.h"
#include "cluster/replication_change.h"
#include "cluster/repair_holds.h"
#include "cluster/tablet_map_sync.h"
#include "cluster/tablet_migration.h"
#include "cluster/tablet_placement.h"
#include "common/bytes.h"
#include "common/failpoints.h"
#include "cql/executor/query_processor.h"
#include "cql/executor/system_auth_store.h"
#include "keyviz/sampler.h"
#include "server/admin_http.h"
#include "server/node_settings.h"
#include "server/cql_server.h"
#include "server/metrics_text.h"
#include "server/host_id.h"
#include "tracing/trace_store.h"

namespace tessera::server {
namespace {

CqlServer::NodeEvent NodeEventOf(cluster::MembershipEvent::Kind kind) {
  switch (kind) {
    case cluster::MembershipEvent::Kind::kNewNode: return CqlServer::NodeEvent::kNewNode;
    case cluster::MembershipEvent::Kind::kRemovedNode: return CqlServer::NodeEvent::kRemovedNode;
    case cluster::MembershipEvent::Kind::kUp: return CqlServer::NodeEvent::kUp;
    case cluster::MembershipEvent::Kind::kDown: break;
  }
  return CqlServer::NodeEvent::kDown;
}

// Right after CREATE TABLE through this node, the new table's placement, so
// that the routing tokens drivers read next follow it (cluster/routing_tokens.h)
// from the first request on. On failure the table's first request retries.
void ResolveNewTablePlacement(cluster::ReplicationServices* r, const cql::SchemaChange& change) {
  if (change.change_type != "CREATED" || change.target != "TABLE" || change.keyspace.starts_with("system")) return;
  auto table = r->db->GetTable(change.keyspace, change.name);
  if (!table.ok()) return;
  if (auto placement = cluster::ResolvePlacement(r, *table); !placement.ok()) {
    spdlog::warn("tablets: placement of new table {}.{} not made yet: {}", change.keyspace, change.name,
                 placement.status().ToString());
  }
}

// Where etcd is, with the node's TLS files for it.
cluster::EtcdEndpoint EtcdOf(const NodeClusterOptions& c) {
  cluster::EtcdEndpoint e(c.etcd_endpoint);
  e.ca_file = c.etcd_ca_file;
  e.certificate_file = c.etcd_certificate_file;
  e.private_key_file = c.etcd_private_key_file;
  return e;
}

}  // namespace

struct Node::Listeners {
  cluster::MembershipView peers;  // before the processor, which reads it
  // Roles and permissions: in etcd on a cluster (every node reads the same
  // ones), in the node's system_auth tables on a single node.
  std::unique_ptr<cluster::EtcdClient> auth_etcd;
  std::unique_ptr<auth::AuthStore> auth_store;
  std::unique_ptr<auth::AuthService> auth;
  std::unique_ptr<cql::QueryProcessor> processor;
  std::unique_ptr<CqlServer> cql;
  std::unique_ptr<keyviz::KeyVizSampler> keyviz;
  std::unique_ptr<AdminHttpServer> admin;
  std::unique_ptr<cluster::Membership> membership;
  std::unique_ptr<cluster::SchemaLog> schema_log;
  // Replication (cluster mode): the internode listener serves this node's
  // replicas; the resolver gives tablets of replicated keyspaces a
  // coordinator over their replica sets.
  std::optional<cluster::InternodeTlsMaterial> internode_tls;  // when internode encryption is on
  std::unique_ptr<cluster::ReplicaService> replica_service;  // what this node serves to coordinators
  std::unique_ptr<cluster::InternodeServer> internode;        // gRPC; null on an in-memory network
  cluster::InMemoryNetwork* in_memory_network = nullptr;      // tests: instead of gRPC
  std::string in_memory_endpoint;                             // where this node is registered on it
  std::unique_ptr<cluster::InternodeTransport> internode_client;
  std::unique_ptr<cluster::TabletPlacements> placements;
  std::unique_ptr<cluster::ReplicationServices> replication;
  std::unique_ptr<cluster::ClusterReplicaResolver> resolver;
  std::unique_ptr<cluster::HintReplayer> hint_replayer;
  std::unique_ptr<cluster::PaxosPruner> paxos_pruner;
  std::unique_ptr<cluster::TabletMapSync> tablet_sync;
  std::unique_ptr<cluster::RepairHoldSync> repair_holds;
  std::unique_ptr<cluster::NodeLoadReporter> load_reporter;
  std::unique_ptr<cluster::PlacementBalancer> placement_balancer;
  std::unique_ptr<cluster::ClusterResizeProposals> resize_proposals;
  std::unique_ptr<cluster::MigrationResumer> migration_resumer;
  std::unique_ptr<cluster::ReplicationChangeCoordinator> replication_changer;
  std::unique_ptr<cluster::FailureDetector> failure_detector;  // over membership and internode_client
};

namespace {

// POST and GET /failpoints on the admin port, over the node's failpoints.
void AddFailpointHooks(Failpoints* failpoints, AdminClusterHooks* hooks) {
  hooks->failpoint = [failpoints](const std::string& name, const std::string& action) {
    return failpoints->Set(name, action);
  };
  hooks->paused_failpoints = [failpoints] { return failpoints->Paused(); };
}

}  // namespace

// Registers the node in etcd and connects membership changes to the
// system tables and the drivers' events.
Status Node::JoinCluster(const NodeOptions& options, const std::string& host_id, Listeners& l) {
  const NodeClusterOptions& c = options.cluster;
  cluster::MembershipOptions m;
  m.etcd_endpoint = EtcdOf(c);
  m.lease_ttl_seconds = c.lease_ttl_seconds;
  m.liveness_from_failure_detector = c.failure_detector_timeout_ms > 0;
  m.self.host_id = host_id;
  m.self.address = c.node_address.empty() ? options.cql_address : c.node_address;
  m.self.cql_port = options.cql_port;
  m.self.data_center = c.data_center;
  m.self.rack = c.rack;
  m.self.token = cluster::TokenOfHostId(host_id);
  m.self.internode_port = l.internode ? l.internode->port() : l.in_memory_endpoint.empty() ? 0 : c.internode_port;
  m.schema_version = [&l] { return l.processor->SchemaVersion(); };
  TESSERA_ASSIGN_OR_RETURN(l.membership, cluster::Membership::Start(m, [&l](const cluster::MembershipEvent& e) {
    spdlog::info("cluster: node {} ({}) {}", UuidText(e.node.host_id), e.node.address,
                 e.kind == cluster::MembershipEvent::Kind::kNewNode ? "joined"
                 : e.kind == cluster::MembershipEvent::Kind::kRemovedNode ? "left"
                 : e.kind == cluster::MembershipEvent::Kind::kUp ? "is up" : "is down");
    const std::string address = InetAddressBytes(e.node.address);
    if (!address.empty()) l.cql->BroadcastNodeEvent(NodeEventOf(e.kind), address, e.node.cql_port);
  }));
  l.peers.Attach(l.membership.get());
  return Status::OK();
}

// Starts the internode listener (before joining, so that the node record
// carries its port).
Status Node::StartInternode(const NodeOptions& options, Listeners& l) {
  const NodeClusterOptions& c = options.cluster;
  l.replica_service = std::make_unique<cluster::ReplicaService>(db_.get(), host_id_);
  l.replica_service->set_trace_store(traces_.get());  // the traces other nodes coordinated
  const std::string address = c.node_address.empty() ? options.cql_address : c.node_address;
  if (c.in_memory_network != nullptr) {
    if (c.internode_port == 0 || c.internode_tls.enabled) {
      return Status::InvalidArgument("an in-memory internode network needs a fixed internode port and no TLS");
    }
    l.in_memory_network = c.in_memory_network;
    l.in_memory_endpoint = address + ":" + std::to_string(c.internode_port);
    c.in_memory_network->Register(l.in_memory_endpoint, l.replica_service.get());
    return Status::OK();
  }
  cluster::ConfigureGrpcRuntime();
  l.internode = std::make_unique<cluster::InternodeServer>(l.replica_service.get());
  if (c.internode_tls.enabled) {
    TESSERA_ASSIGN_OR_RETURN(auto material, cluster::LoadInternodeTlsFiles(c.internode_tls));
    l.internode_tls = std::move(material);
  }
  return l.internode->Start(address, c.internode_port, l.internode_tls ? &*l.internode_tls : nullptr);
}

// Lets every tablet of a replicated keyspace coordinate over its replicas.
// REQUIRES: membership started.
Status Node::AttachReplication(const NodeOptions& options, Listeners& l) {
  const NodeClusterOptions& c = options.cluster;
  cluster::HintLimits limits;
  limits.max_bytes_per_node = c.max_hints_bytes_per_node;
  limits.max_age_micros = c.max_hint_window_micros;
  TESSERA_ASSIGN_OR_RETURN(auto hints, cluster::HintStore::Open(options.database.data_dir + "/hints", limits));
  if (c.in_memory_network != nullptr) {
    l.internode_client = c.in_memory_network->Transport(l.in_memory_endpoint);
  } else {
    l.internode_client = std::make_unique<cluster::InternodeClient>(l.internode_tls ? &*l.internode_tls : nullptr);
  }
  if (c.failure_detector_timeout_ms > 0) {
    cluster::FailureDetectorOptions fd;
    fd.down_after_micros = c.failure_detector_timeout_ms * 1000;
    // A tenth of the time-out, at most 200 ms: a node that joins is down to
    // the others until their next ping, whatever the time-out.
    fd.ping_interval_micros = std::clamp<int64_t>(fd.down_after_micros / 10, 10'000, 200'000);
    l.failure_detector =
        std::make_unique<cluster::FailureDetector>(l.membership.get(), l.internode_client.get(), fd);
    l.failure_detector->Start();
  }
  // Every trace this node finishes goes to the other live members as well,
  // so that a driver reading system_traces through any node finds it
  // (tracing/trace_store.h). Cleared first in Stop.
  traces_->set_on_finish([client = l.internode_client.get(), membership = l.membership.get(),
                          self = host_id_](const tracing::TraceSessionRecord& session) {
    for (const auto& m : membership->Members()) {
      if (m.record.host_id == self || !m.alive || m.record.internode_port <= 0) continue;
      client->StoreTrace(m.record.address + ":" + std::to_string(m.record.internode_port), session, 2'000'000,
                         [](Status) {});  // best effort, as Cassandra's trace writes
    }
  });
  l.placements = std::make_unique<cluster::TabletPlacements>(&l.membership->etcd());
  l.peers.AttachRouting(db_.get(), l.placements.get());  // system.local/peers tokens follow the placement
  l.replication = std::make_unique<cluster::ReplicationServices>();
  cluster::ReplicationServices& r = *l.replication;
  r.db = db_.get();
  r.coordinator = coordinator_.get();
  r.membership = l.membership.get();
  r.placements = l.placements.get();
  r.client = l.internode_client.get();
  r.self_host_id = host_id_;
  r.local_dc = c.data_center;
  r.write_timeout_micros = c.write_timeout_micros;
  r.read_timeout_micros = c.read_timeout_micros;
  r.hints = hints;
  r.local_replica_service = l.replica_service.get();
  r.ballot_clock = std::make_unique<cluster::BallotClock>(host_id_);
  r.failpoints = &failpoints_;
  r.stream_limiter = std::make_shared<cluster::StreamRateLimiter>(c.stream_bytes_per_second);
  r.delayed_calls = std::make_unique<cluster::DelayedCalls>();
  l.resolver = std::make_unique<cluster::ClusterReplicaResolver>(l.replication.get());
  db_->AttachPlacementView(l.resolver.get());
  coordinator_->AttachReplicaResolver(l.resolver.get());
  cluster::HintReplayOptions replay;
  replay.wanted = [placements = l.placements.get()](const std::string& host, const std::string& table_uuid,
                                                    const WriteSet& writes) {
    auto placement = placements->Cached(table_uuid);
    return !placement || writes.empty() || cluster::HoldsOrReceives(*placement, host, writes.ops().front().key);
  };
  l.hint_replayer =
      std::make_unique<cluster::HintReplayer>(hints, l.membership.get(), l.internode_client.get(), replay);
  l.hint_replayer->Start();
  l.paxos_pruner = std::make_unique<cluster::PaxosPruner>(l.replica_service.get(),
                                                          std::chrono::milliseconds(c.paxos_prune_interval_ms));
  l.paxos_pruner->Start();
  l.peers.AttachPaxos(l.replica_service.get());  // system.paxos
  l.tablet_sync = std::make_unique<cluster::TabletMapSync>(db_.get(), &l.membership->etcd(), EtcdOf(c),
                                                           l.placements.get(), &r.placement_fence, host_id_);
  TESSERA_RETURN_IF_ERROR(l.tablet_sync->Start());
  l.repair_holds = std::make_unique<cluster::RepairHoldSync>(db_.get(), &l.membership->etcd(), EtcdOf(c),
                                                             host_id_);
  TESSERA_RETURN_IF_ERROR(l.repair_holds->Start());
  // The balancer proposes replicated tablets' splits and merges; the balancer leader decides.
  l.resize_proposals = std::make_unique<cluster::ClusterResizeProposals>(&l.membership->etcd(), host_id_);
  if (db_->balancer()) db_->balancer()->AttachResizeProposals(l.resize_proposals.get());
  db_->StartBalancer();
  if (Status s = coordinator_->Start(); !s.ok()) spdlog::warn("resuming index and view builds failed: {}", s.ToString());
  l.load_reporter = std::make_unique<cluster::NodeLoadReporter>(
      &l.membership->etcd(), db_.get(), host_id_, std::chrono::milliseconds(c.load_report_interval_ms));
  l.load_reporter->Start();
  {
    // Always: without moves (--no-placement-balancer) the leader still decides splits and merges.
    cluster::PlacementBalancerOptions b;
    b.moves = c.placement_balancer;
    b.interval_micros = c.placement_balancer_interval_micros;
    b.resize_interval_micros = db_->balancer_options().interval_micros;
    b.plan.min_bytes = c.placement_balancer_min_bytes;
    b.max_moves_per_node = c.placement_balancer_max_moves_per_node;
    l.placement_balancer = std::make_unique<cluster::PlacementBalancer>(l.replication.get(), b);
    l.placement_balancer->Start();
  }
  l.migration_resumer = std::make_unique<cluster::MigrationResumer>(l.replication.get(), cluster::MigrationResumerOptions{});
  l.migration_resumer->Start();
  l.replication_changer = std::make_unique<cluster::ReplicationChangeCoordinator>(l.replication.get(),
                                                                                   cluster::ReplicationChangeOptions{});
  l.processor->set_replication_changer(l.replication_changer.get());
  if (l.admin) {
    AdminClusterHooks hooks;
    cluster::ReplicationServices* services = l.replication.get();
    const cluster::ReplicaService* served = l.replica_service.get();
    hooks.repair = [services](const std::string& keyspace,
                              const std::string& table) -> Result<std::pair<bool, std::string>> {
      TESSERA_ASSIGN_OR_RETURN(cluster::RepairReport report, cluster::RepairTables(services, keyspace, table));
      return std::make_pair(report.failed == 0, cluster::RepairReportJson(report));
    };
    hooks.metrics = [services, served] { return cluster::RenderClusterMetrics(*services, served); };
    hooks.status = [services] { return cluster::ClusterStatusJson(*services); };
    hooks.tablets = [services](const std::string& keyspace, const std::string& table) {
      return cluster::ClusterTabletsJson(*services, keyspace, table);
    };
    hooks.move = [services](const std::string& keyspace, const std::string& table, const std::string& start,
                            const std::string& from, const std::string& to) -> Result<std::pair<bool, std::string>> {
      TESSERA_ASSIGN_OR_RETURN(cluster::MoveReport report,
                               cluster::MoveTabletReplica(services, keyspace, table, start, from, to));
      return std::make_pair(report.completed, cluster::MoveReportJson(report));
    };
    hooks.decommission = [services](const std::string& node) -> Result<std::pair<bool, std::string>> {
      TESSERA_ASSIGN_OR_RETURN(cluster::DecommissionReport report, cluster::DecommissionNode(services, node));
      return std::make_pair(report.left, cluster::DecommissionReportJson(report));
    };
    hooks.removenode = [services](const std::string& node) -> Result<std::pair<bool, std::string>> {
      TESSERA_ASSIGN_OR_RETURN(cluster::DecommissionReport report, cluster::RemoveNode(services, node));
      return std::make_pair(report.left, cluster::DecommissionReportJson(report));
    };
    AddFailpointHooks(&failpoints_, &hooks);
    l.admin->SetClusterHooks(std::move(hooks));
  }
  return Status::OK();
}

Result<std::unique_ptr<Node>> Node::Start(const NodeOptions& options) {
  std::unique_ptr<Node> node(new Node());
  for (const auto& f : options.failpoints) TESSERA_RETURN_IF_ERROR(node->failpoints_.SetFromFlag(f));
  DatabaseOptions database = options.database;
  database.failpoints = &node->failpoints_;
  // A cluster node's balancer splits only once splits go through etcd.
  database.defer_balancer = !options.cluster.etcd_endpoint.empty();
  TESSERA_ASSIGN_OR_RETURN(node->db_, Database::Open(database));
  node->coordinator_ = std::make_unique<Coordinator>(node->db_.get());
  // Index and view builds write through the replicas: a cluster node resumes them at AttachReplication.
  if (options.cluster.etcd_endpoint.empty()) TESSERA_RETURN_IF_ERROR(node->coordinator_->Start());
  TESSERA_ASSIGN_OR_RETURN(node->host_id_, LoadOrCreateHostId(options.database.data_dir));
  node->listeners_ = std::make_unique<Listeners>();
  Listeners& l = *node->listeners_;
  TESSERA_RETURN_IF_ERROR(auth::ValidateAuthOptions(options.auth));
  if (options.auth.authentication) {
    if (options.cluster.etcd_endpoint.empty()) {
      auto tables = std::make_unique<cql::SystemAuthStore>(node->coordinator_.get());
      TESSERA_RETURN_IF_ERROR(tables->CreateSchema());
      l.auth_store = std::move(tables);
    } else {
      l.auth_etcd = std::make_unique<cluster::EtcdClient>(EtcdOf(options.cluster));
      l.auth_store = std::make_unique<cluster::EtcdAuthStore>(l.auth_etcd.get());
    }
    l.auth = std::make_unique<auth::AuthService>(l.auth_store.get(), options.auth);
    TESSERA_RETURN_IF_ERROR(l.auth->Setup());
  }
  const auto settings = NodeSettings(options, *node->db_->engine());  // GET /settings, system_views.settings
  if (options.admin_port >= 0) {
    l.keyviz = std::make_unique<keyviz::KeyVizSampler>(node->db_.get(), options.keyviz, options.cql_address);
    l.keyviz->Start();
    AdminSecurity security;
    security.auth = l.auth.get();
    security.metrics_require_auth = options.admin_metrics_require_auth;
    if (options.admin_tls) {
      security.certificate_file = options.client_tls.certificate_file;
      security.private_key_file = options.client_tls.private_key_file;
    }
    l.admin = std::make_unique<AdminHttpServer>(node->coordinator_.get(), l.keyviz.get(), security);
    TESSERA_RETURN_IF_ERROR(l.admin->Start(options.admin_address, static_cast<uint16_t>(options.admin_port)));
    // Failpoints on every node (a cluster node's hooks add the rest at AttachReplication).
    AdminClusterHooks hooks;
    AddFailpointHooks(&node->failpoints_, &hooks);
    l.admin->SetClusterHooks(std::move(hooks));
    l.admin->SetSettings(settings);
  }
  CqlServerOptions cql_options;
  cql_options.address = options.cql_address;
  cql_options.port = options.cql_port;
  cql_options.tls = options.client_tls;
  cql_options.limits = options.limits;
  cql_options.request_threads = options.request_threads;
  cql_options.waiting_threads = options.waiting_request_threads;
  cql::NodeInfo info;
  info.rpc_address = options.cql_address;
  info.rpc_port = options.cql_port;
  info.host_id = node->host_id_;
  info.settings = settings;
  if (!options.cluster.etcd_endpoint.empty()) {
    info.data_center = options.cluster.data_center;
    info.rack = options.cluster.rack;
    info.token = cluster::TokenOfHostId(node->host_id_);
    info.cluster = &l.peers;
    if (!options.cluster.node_address.empty()) info.rpc_address = options.cluster.node_address;
  }
  node->traces_ = std::make_unique<tracing::TraceStore>(info.rpc_address);
  info.traces = node->traces_.get();
  if (l.admin) l.admin->SetTraceStore(node->traces_.get());
  // `l` lives as long as the node, and the listener is stopped before the processor goes.
  l.processor = std::make_unique<cql::QueryProcessor>(
      node->coordinator_.get(), info, [&l](const cql::SchemaChange& change, bool originating) {
    if (l.cql) l.cql->BroadcastSchemaChange(change);
    if (l.membership) l.membership->NotifySchemaChanged();
    if (l.replication && originating) ResolveNewTablePlacement(l.replication.get(), change);
  }, l.auth.get());
  if (options.enable_user_defined_functions) l.processor->EnableUserDefinedFunctions();
  l.cql = std::make_unique<CqlServer>(cql_options, l.processor.get());
  if (l.admin) {
    // The admin server stops before the listeners (and this CQL server) go.
    l.admin->SetFrontDoorMetrics([cql = l.cql.get()] { return RenderFrontDoorMetrics(cql->request_latency()); });
  }
  if (!options.cluster.etcd_endpoint.empty() && options.cql_port == 0) {
    return Status::InvalidArgument("a cluster node needs a fixed CQL port (its peers publish it)");
  }
  if (!options.cluster.etcd_endpoint.empty()) {
    // Catches up with the cluster's schema before serving.
    TESSERA_ASSIGN_OR_RETURN(
        l.schema_log, cluster::SchemaLog::Start(EtcdOf(options.cluster), options.database.data_dir, node->host_id_,
                                                [&l](const std::string& keyspace, const std::string& statement,
                                                     const std::string& table_uuid) {
                                                  return l.processor->ApplySchemaStatement(keyspace, statement,
                                                                                           table_uuid);
                                                }));
    l.processor->set_schema_coordinator(l.schema_log.get());
    TESSERA_RETURN_IF_ERROR(node->StartInternode(options, l));
    // Joins before serving, so that the first driver to connect finds every
    // member in system.peers.
    TESSERA_RETURN_IF_ERROR(JoinCluster(options, node->host_id_, l));
    TESSERA_RETURN_IF_ERROR(node->AttachReplication(options, l));
  }
  TESSERA_RETURN_IF_ERROR(l.cql->Start());
  return node;
}

Node::~Node() { Stop(); }

void Node::Stop() {
  if (listeners_) {
    // No finished trace goes to the other nodes once the transport may go.
    if (traces_) traces_->set_on_finish({});
    // Tablets go back to the local replica before the services they use go.
    if (listeners_->admin) listeners_->admin->SetClusterHooks({});
    // A migration held at a failpoint would hold the shutdown.
    failpoints_.ReleaseAll();
    // Builds write through the replicas: they stop while the replication services are there.
    if (coordinator_) coordinator_->Stop();
    if (listeners_->replication_changer) listeners_->replication_changer->Stop();
    if (listeners_->migration_resumer) listeners_->migration_resumer->Stop();
    if (listeners_->placement_balancer) listeners_->placement_balancer->Stop();
    if (listeners_->load_reporter) listeners_->load_reporter->Stop();
    if (listeners_->hint_replayer) listeners_->hint_replayer->Stop();
    if (listeners_->paxos_pruner) listeners_->paxos_pruner->Stop();
    if (listeners_->tablet_sync) listeners_->tablet_sync->Stop();
    if (listeners_->repair_holds) listeners_->repair_holds->Stop();
    // No split or merge may happen locally once splits stop going through etcd.
    if (listeners_->resolver && db_->balancer()) {
      db_->balancer()->Stop();
      db_->balancer()->AttachResizeProposals(nullptr);
    }
    if (listeners_->resolver) {
      coordinator_->AttachReplicaResolver(nullptr);
      db_->AttachPlacementView(nullptr);
    }
    if (listeners_->failure_detector) listeners_->failure_detector->Stop();
    if (listeners_->membership) {
      listeners_->peers.Detach();
      listeners_->membership->Stop();
    }
    if (listeners_->cql) listeners_->cql->Stop();
    if (listeners_->internode) listeners_->internode->Stop();
    if (listeners_->in_memory_network) {
      listeners_->in_memory_network->Unregister(listeners_->in_memory_endpoint);  // a stopped node is unreachable
    }
    // The coordinator's requests still in flight answer into the replication
    // services (latency estimates, hints): the client waits them out
    // (a lost one ends at its time-out) while those services still exist.
    // No speculative retry may send once the client starts going.
    if (listeners_->replication && listeners_->replication->delayed_calls) {
      listeners_->replication->delayed_calls->Stop();
    }
    listeners_->internode_client.reset();
    if (listeners_->schema_log) listeners_->schema_log->Stop();
    if (listeners_->admin) listeners_->admin->Stop();
    if (listeners_->keyviz) listeners_->keyviz->Stop();
    listeners_.reset();
  }
  coordinator_.reset();
  db_.reset();
}

uint16_t Node::cql_port() const { return listeners_ && listeners_->cql ? listeners_->cql->port() : 0; }

auth::AuthService* Node::auth() const { return listeners_ ? listeners_->auth.get() : nullptr; }

uint16_t Node::admin_port() const { return listeners_ && listeners_->admin ? listeners_->admin->port() : 0; }

}  // namespace tessera::server
