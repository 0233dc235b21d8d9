#include "server/node.h"

#include <spdlog/spdlog.h>

#include "cluster/membership.h"
#include "cluster/membership_view.h"
#include "cluster/schema_log.h"
#include "common/bytes.h"
#include "cql/executor/query_processor.h"
#include "cql/executor/system_auth_store.h"
#include "keyviz/sampler.h"
#include "server/admin_http.h"
#include "server/cql_server.h"
#include "server/host_id.h"

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

}  // namespace

struct Node::Listeners {
  cluster::MembershipView peers;  // before the processor, which reads it
  std::unique_ptr<cql::SystemAuthStore> auth_store;
  std::unique_ptr<auth::AuthService> auth;
  std::unique_ptr<cql::QueryProcessor> processor;
  std::unique_ptr<CqlServer> cql;
  std::unique_ptr<keyviz::KeyVizSampler> keyviz;
  std::unique_ptr<AdminHttpServer> admin;
  std::unique_ptr<cluster::Membership> membership;
  std::unique_ptr<cluster::SchemaLog> schema_log;
};

// Registers the node in etcd and connects membership changes to the
// system tables and the drivers' events.
Status Node::JoinCluster(const NodeOptions& options, const std::string& host_id, Listeners& l) {
  const NodeClusterOptions& c = options.cluster;
  cluster::MembershipOptions m;
  m.etcd_endpoint = c.etcd_endpoint;
  m.lease_ttl_seconds = c.lease_ttl_seconds;
  m.self.host_id = host_id;
  m.self.address = c.node_address.empty() ? options.cql_address : c.node_address;
  m.self.cql_port = options.cql_port;
  m.self.data_center = c.data_center;
  m.self.rack = c.rack;
  m.self.token = cluster::TokenOfHostId(host_id);
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

Result<std::unique_ptr<Node>> Node::Start(const NodeOptions& options) {
  std::unique_ptr<Node> node(new Node());
  TESSERA_ASSIGN_OR_RETURN(node->db_, Database::Open(options.database));
  TESSERA_ASSIGN_OR_RETURN(node->host_id_, LoadOrCreateHostId(options.database.data_dir));
  node->listeners_ = std::make_unique<Listeners>();
  Listeners& l = *node->listeners_;
  TESSERA_RETURN_IF_ERROR(auth::ValidateAuthOptions(options.auth));
  if (options.auth.authentication) {
    l.auth_store = std::make_unique<cql::SystemAuthStore>(node->db_.get());
    TESSERA_RETURN_IF_ERROR(l.auth_store->CreateSchema());
    l.auth = std::make_unique<auth::AuthService>(l.auth_store.get(), options.auth);
    TESSERA_RETURN_IF_ERROR(l.auth->Setup());
  }
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
    l.admin = std::make_unique<AdminHttpServer>(node->db_.get(), l.keyviz.get(), security);
    TESSERA_RETURN_IF_ERROR(l.admin->Start(options.admin_address, static_cast<uint16_t>(options.admin_port)));
  }
  CqlServerOptions cql_options;
  cql_options.address = options.cql_address;
  cql_options.port = options.cql_port;
  cql_options.tls = options.client_tls;
  cql_options.limits = options.limits;
  cql::NodeInfo info;
  info.rpc_address = options.cql_address;
  info.rpc_port = options.cql_port;
  info.host_id = node->host_id_;
  if (!options.cluster.etcd_endpoint.empty()) {
    info.data_center = options.cluster.data_center;
    info.rack = options.cluster.rack;
    info.token = cluster::TokenOfHostId(node->host_id_);
    info.cluster = &l.peers;
    if (!options.cluster.node_address.empty()) info.rpc_address = options.cluster.node_address;
  }
  // `l` lives as long as the node, and the listener is stopped before the processor goes.
  l.processor = std::make_unique<cql::QueryProcessor>(node->db_.get(), info, [&l](const cql::SchemaChange& change) {
    if (l.cql) l.cql->BroadcastSchemaChange(change);
    if (l.membership) l.membership->NotifySchemaChanged();
  }, l.auth.get());
  l.cql = std::make_unique<CqlServer>(cql_options, l.processor.get());
  if (!options.cluster.etcd_endpoint.empty() && options.cql_port == 0) {
    return Status::InvalidArgument("a cluster node needs a fixed CQL port (its peers publish it)");
  }
  if (!options.cluster.etcd_endpoint.empty()) {
    // Catches up with the cluster's schema before serving.
    TESSERA_ASSIGN_OR_RETURN(
        l.schema_log, cluster::SchemaLog::Start(options.cluster.etcd_endpoint, options.database.data_dir, node->host_id_,
                                                [&l](const std::string& keyspace, const std::string& statement,
                                                     const std::string& table_uuid) {
                                                  return l.processor->ApplySchemaStatement(keyspace, statement,
                                                                                           table_uuid);
                                                }));
    l.processor->set_schema_coordinator(l.schema_log.get());
    l.processor->set_user_data_refusal(
        "Tessera's cluster mode does not replicate table data yet (membership, discovery and schema are cluster-wide; "
        "replication is the next step of issue 10), so reads and writes of user tables are refused rather than "
        "scattered over nodes; run a single node (without --etcd) to store data");
  }
  // Joins before serving, so that the first driver to connect finds every
  // member in system.peers.
  if (!options.cluster.etcd_endpoint.empty()) TESSERA_RETURN_IF_ERROR(JoinCluster(options, node->host_id_, l));
  TESSERA_RETURN_IF_ERROR(l.cql->Start());
  return node;
}

Node::~Node() { Stop(); }

void Node::Stop() {
  if (listeners_) {
    if (listeners_->membership) {
      listeners_->peers.Detach();
      listeners_->membership->Stop();
    }
    if (listeners_->cql) listeners_->cql->Stop();
    if (listeners_->schema_log) listeners_->schema_log->Stop();
    if (listeners_->admin) listeners_->admin->Stop();
    if (listeners_->keyviz) listeners_->keyviz->Stop();
    listeners_.reset();
  }
  db_.reset();
}

uint16_t Node::cql_port() const { return listeners_ && listeners_->cql ? listeners_->cql->port() : 0; }

auth::AuthService* Node::auth() const { return listeners_ ? listeners_->auth.get() : nullptr; }

uint16_t Node::admin_port() const { return listeners_ && listeners_->admin ? listeners_->admin->port() : 0; }

}  // namespace tessera::server
