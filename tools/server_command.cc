#include "tools/server_command.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <memory>

#include "cql/executor/query_processor.h"
#include "db/database.h"
#include "server/admin_http.h"
#include "server/cql_server.h"

namespace tessera {
namespace {

bool SplitAddress(const std::string& text, std::string* address, uint16_t* port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return false;
  char* end = nullptr;
  const long p = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p < 0 || p > 65535) return false;
  *address = text.substr(0, colon);
  *port = static_cast<uint16_t>(p);
  return true;
}

}  // namespace

int RunServer(const ServerConfig& config) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // delivered to sigwait below, not as interrupts

  DatabaseOptions options;
  options.data_dir = config.data_dir;
  options.balancer = config.balancer;
  options.guardrails = config.guardrails;
  auto db = Database::Open(options);
  if (!db.ok()) {
    spdlog::error("cannot open {}: {}", config.data_dir, db.status().ToString());
    return 1;
  }
  size_t tablets = 0;
  const auto tables = (*db)->catalog().AllTables();
  for (const auto& t : tables) tablets += (*db)->Tablets(*t).size();
  server::CqlServerOptions listen_options;
  if (!SplitAddress(config.listen, &listen_options.address, &listen_options.port)) {
    spdlog::error("--listen takes address:port, got {}", config.listen);
    return 2;
  }
  server::AdminHttpServer admin(db->get());
  if (config.admin_listen != "off") {
    std::string address;
    uint16_t port = 0;
    if (!SplitAddress(config.admin_listen, &address, &port)) {
      spdlog::error("--admin-listen takes address:port or off, got {}", config.admin_listen);
      return 2;
    }
    if (Status s = admin.Start(address, port); !s.ok()) {
      spdlog::error("{}", s.ToString());
      return 1;
    }
    spdlog::info("admin HTTP on {}:{} (/metrics, /tablets/split, /tablets/merge)", address, admin.port());
  }
  cql::NodeInfo node;
  node.rpc_address = listen_options.address;
  node.rpc_port = listen_options.port;
  std::unique_ptr<server::CqlServer> listener;
  cql::QueryProcessor processor(db->get(), node, [&listener](const cql::SchemaChange& change) {
    if (listener) listener->BroadcastSchemaChange(change);
  });
  listener = std::make_unique<server::CqlServer>(listen_options, &processor);
  Status started = listener->Start();
  if (!started.ok()) {
    spdlog::error("{}", started.ToString());
    return 1;
  }
  spdlog::info("tessera server ready: data directory {}, {} keyspaces, {} tables, {} tablets; CQL on {}:{}",
               config.data_dir, (*db)->catalog().Keyspaces().size(), tables.size(), tablets, listen_options.address,
               listener->port());
  if (config.exit_after_start) {
    listener->Stop();
    admin.Stop();
    return 0;
  }
  spdlog::info("serving until SIGINT or SIGTERM (Ctrl-C)");
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received signal {}, shutting down", sig);
  listener->Stop();
  admin.Stop();
  db->reset();
  spdlog::info("shutdown complete");
  return 0;
}

}  // namespace tessera
