// Database: materialized view DDL (db/materialized_view.h): the view table
// and its place in its base's views. Keeping the view rows right on every
// base write and building them for the rows already there is the
// coordinator's (coordinator/view_maintenance.cc, coordinator/derived_builds.cc).
#include <algorithm>

#include "db/database.h"

namespace tessera {
// ---- DDL ----

Result<std::shared_ptr<const TableSchema>> Database::CreateView(TableSchema view) {
  if (!view.view) return Status::InvalidArgument("table " + view.name + " is not a materialized view");
  const std::string keyspace = view.keyspace, name = view.name, base_name = view.view->base_table;
  TESSERA_ASSIGN_OR_RETURN(auto base, catalog_.GetTable(keyspace, base_name));
  TESSERA_RETURN_IF_ERROR(ValidateViewDefinition(*base, view));
  view.view->base_uuid = base->uuid;
  TESSERA_ASSIGN_OR_RETURN(auto created, CreateTable(std::move(view)));
  TableSchema next = *base;
  next.views.push_back(name);
  auto altered = catalog_.AlterTable(std::move(next));
  if (!altered.ok()) {
    std::lock_guard<std::mutex> admin(admin_mu_);
    (void)DropTableLocked(keyspace, name);
    return altered.status();
  }
  return created;
}

Status Database::DropView(const std::string& keyspace, const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(auto view, catalog_.GetTable(keyspace, name));
  if (!view->is_view()) return Status::NotFound("Materialized view '" + name + "' doesn't exist");
  // The base stops maintaining it first, so no write lands in a dropped table.
  if (auto base = catalog_.GetTable(keyspace, view->view->base_table); base.ok()) {
    TableSchema next = **base;
    std::erase(next.views, name);
    TESSERA_RETURN_IF_ERROR(catalog_.AlterTable(std::move(next)).status());
  }
  {
    std::lock_guard<std::mutex> admin(admin_mu_);
    TESSERA_RETURN_IF_ERROR(DropTableLocked(keyspace, name));
  }
  return Status::OK();
}

}  // namespace tessera
