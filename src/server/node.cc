#include "server/node.h"

#include "cql/executor/query_processor.h"
#include "cql/executor/system_auth_store.h"
#include "keyviz/sampler.h"
#include "server/admin_http.h"
#include "server/cql_server.h"

namespace tessera::server {

struct Node::Listeners {
  std::unique_ptr<cql::SystemAuthStore> auth_store;
  std::unique_ptr<auth::AuthService> auth;
  std::unique_ptr<cql::QueryProcessor> processor;
  std::unique_ptr<CqlServer> cql;
  std::unique_ptr<keyviz::KeyVizSampler> keyviz;
  std::unique_ptr<AdminHttpServer> admin;
};

Result<std::unique_ptr<Node>> Node::Start(const NodeOptions& options) {
  std::unique_ptr<Node> node(new Node());
  TESSERA_ASSIGN_OR_RETURN(node->db_, Database::Open(options.database));
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
  // `l` lives as long as the node, and the listener is stopped before the processor goes.
  l.processor = std::make_unique<cql::QueryProcessor>(node->db_.get(), info, [&l](const cql::SchemaChange& change) {
    if (l.cql) l.cql->BroadcastSchemaChange(change);
  }, l.auth.get());
  l.cql = std::make_unique<CqlServer>(cql_options, l.processor.get());
  TESSERA_RETURN_IF_ERROR(l.cql->Start());
  return node;
}

Node::~Node() { Stop(); }

void Node::Stop() {
  if (listeners_) {
    if (listeners_->cql) listeners_->cql->Stop();
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
