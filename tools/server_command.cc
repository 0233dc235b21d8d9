#include "tools/server_command.h"

#include <spdlog/spdlog.h>

#include <csignal>

#include "db/database.h"

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
  spdlog::info("tessera server ready: data directory {}, {} keyspaces, {} tables, {} tablets",
               config.data_dir, (*db)->catalog().Keyspaces().size(), tables.size(), tablets);
  if (config.exit_after_start) return 0;
  spdlog::info("serving until SIGINT or SIGTERM (Ctrl-C)");
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received signal {}, shutting down", sig);
  db->reset();
  spdlog::info("shutdown complete");
  return 0;
}

}  // namespace tessera
