#include "server/node.h"

#include "cql/executor/query_processor.h"
#include "keyviz/sampler.h"
#include "server/admin_http.h"
#include "server/cql_server.h"

namespace tessera::server {

struct Node::Listeners {
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
  if (options.admin_port >= 0) {
    l.keyviz = std::make_unique<keyviz::KeyVizSampler>(node->db_.get(), options.keyviz, options.cql_address);
    l.keyviz->Start();
    l.admin = std::make_unique<AdminHttpServer>(node->db_.get(), l.keyviz.get());
    TESSERA_RETURN_IF_ERROR(l.admin->Start(options.admin_address, static_cast<uint16_t>(options.admin_port)));
  }
  CqlServerOptions cql_options;
  cql_options.address = options.cql_address;
  cql_options.port = options.cql_port;
  cql::NodeInfo info;
  info.rpc_address = options.cql_address;
  info.rpc_port = options.cql_port;
  // `l` lives as long as the node, and the listener is stopped before the processor goes.
  l.processor = std::make_unique<cql::QueryProcessor>(node->db_.get(), info, [&l](const cql::SchemaChange& change) {
    if (l.cql) l.cql->BroadcastSchemaChange(change);
  });
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

uint16_t Node::admin_port() const { return listeners_ && listeners_->admin ? listeners_->admin->port() : 0; }

}  // namespace tessera::server
