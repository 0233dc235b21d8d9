#include "tools/server_command.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <memory>

#include "cql/executor/query_processor.h"
#include "db/database.h"
#include "server/cql_server.h"

namespace tessera {

int RunServer(const ServerConfig& config) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // delivered to sigwait below, not as interrupts

  DatabaseOptions options;
  options.data_dir = config.data_dir;
  auto db = Database::Open(options);
  if (!db.ok()) {
    spdlog::error("cannot open {}: {}", config.data_dir, db.status().ToString());
    return 1;
  }
  size_t tablets = 0;
  const auto tables = (*db)->catalog().AllTables();
  for (const auto& t : tables) tablets += (*db)->Tablets(*t).size();
  auto colon = config.listen.rfind(':');
  if (colon == std::string::npos) {
    spdlog::error("--listen takes address:port, got {}", config.listen);
    return 2;
  }
  server::CqlServerOptions listen_options;
  listen_options.address = config.listen.substr(0, colon);
  listen_options.port = static_cast<uint16_t>(std::stoi(config.listen.substr(colon + 1)));
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
    return 0;
  }
  spdlog::info("serving until SIGINT or SIGTERM (Ctrl-C)");
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received signal {}, shutting down", sig);
  listener->Stop();
  db->reset();
  spdlog::info("shutdown complete");
  return 0;
}

}  // namespace tessera
