#include "cluster/migration_resumer.h"

#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "cluster/etcd_client.h"
#include "cluster/placed_tables.h"
#include "cluster/replicated_tablet.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {

MigrationResumer::MigrationResumer(ReplicationServices* services, MigrationResumerOptions options)
    : services_(services), options_(std::move(options)) {}

MigrationResumer::~MigrationResumer() { Stop(); }

void MigrationResumer::Start() {
  task_.Start(options_.interval_micros, [this] { RunOnce(); });
}

void MigrationResumer::Stop() { task_.Stop(); }

int MigrationResumer::RunOnce() {
  std::lock_guard<std::mutex> round(round_mu_);
  ReplicationServices* s = services_;
  const std::string& self = s->self_host_id;
  std::map<std::string, bool> alive;  // host id -> alive, members only
  std::string lowest_alive;
  for (const auto& m : s->membership->Members()) {
    // A driver counts as gone when this node cannot reach it and its process
    // no longer renews its lease: one merely cut off from this node (a
    // partition) keeps its moves.
    alive[m.record.host_id] = m.alive || m.leased;
    if (m.alive && (lowest_alive.empty() || m.record.host_id < lowest_alive)) lowest_alive = m.record.host_id;
  }
  // A move of this node's counts as lost only when it was in hand neither
  // before the read nor after it (one that ended in between is refused by
  // the fenced take-over).
  const std::set<std::string> held_before = s->migrations_in_hand.Keys();
  auto tables = ReadPlacedTables(*s);
  if (!tables.ok()) return 0;
  int taken = 0;
  for (const auto& placed : *tables) {
    const auto& table = placed.table;
    for (const auto& t : placed.placement) {
      if (!t.transition || t.transition->driver.empty()) continue;
      const std::string& driver = t.transition->driver;
      bool orphan;
      if (driver == self) {
        const std::string key = MigrationKey(table->uuid, t.start);
        orphan = !held_before.count(key) && !s->migrations_in_hand.Holds(key);
      } else {
        auto d = alive.find(driver);
        orphan = (d == alive.end() || !d->second) && self == lowest_alive;
      }
      if (!orphan) continue;
      auto report = ResumeMigration(s, table, t, options_.migration);
      if (!report.ok()) continue;  // in hand here meanwhile
      ++taken;
      spdlog::info("tablets: {}.{}: took over a migration: {}", table->keyspace, table->name,
                   MoveReportJson(*report));
    }
  }
  return taken;
}

}  // namespace tessera::cluster
