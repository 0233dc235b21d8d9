// Coordinator (coordinator/coordinator.h): the write path with its derived
// rows, and the DDL of indexes and views with their builds' bookkeeping.
#include "coordinator/coordinator.h"

#include <algorithm>

#include "coordinator/build_markers.h"

namespace tessera {
namespace {

bool HasDerivedRows(const TableSchema& t) {
  return !t.views.empty() ||
         std::any_of(t.indexes.begin(), t.indexes.end(), [](const IndexDef& i) { return !i.is_vector(); });
}

}  // namespace

Coordinator::Coordinator(Database* db) : db_(db) { RefreshDerivedFlag(); }

Coordinator::~Coordinator() { Stop(); }

void Coordinator::RefreshDerivedFlag() {
  const auto tables = db_->catalog().AllTables();
  any_derived_.store(std::any_of(tables.begin(), tables.end(), [](const auto& t) { return HasDerivedRows(*t); }),
                     std::memory_order_release);
}

void Coordinator::Stop() {
  std::vector<std::jthread> builders;
  {
    std::lock_guard<std::mutex> lock(builds_mu_);
    stopping_ = true;
    builders.swap(builders_);
  }
  for (auto& b : builders) b.request_stop();
  builders.clear();  // joins
}

std::vector<Coordinator::IndexedWrite> Coordinator::WritesWithDerivedRows(
    const std::vector<Mutation>& mutations) const {
  std::vector<IndexedWrite> indexed;
  if (!any_derived_.load(std::memory_order_acquire)) return indexed;
  for (const Mutation& m : mutations) {
    auto current = db_->catalog().GetTableById(m.table->id);
    if (current && HasDerivedRows(*current)) indexed.push_back({&m, std::move(current)});
  }
  return indexed;
}

// ---- writes ----

Status Coordinator::Apply(const Mutation& mutation, const RequestConsistency& consistency) {
  return ApplyBatch({mutation}, nullptr, consistency);
}

Status Coordinator::ApplyBatch(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                               const RequestConsistency& consistency) {
  if (mutations.empty()) return Status::OK();
  const std::vector<IndexedWrite> indexed = WritesWithDerivedRows(mutations);
  if (indexed.empty()) return ApplyBase(mutations, warnings, consistency);
  return ApplyWithDerivedRows(mutations, indexed, warnings, consistency);
}

// Every level, SERIAL rounds included, now answers from replica answers;
// the parameter stays for the levels that may not.
bool Coordinator::AppliesWithoutWaiting(const std::vector<Mutation>& mutations,
                                        const RequestConsistency& /*consistency*/) const {
  return replicated() && !mutations.empty() &&
         std::none_of(mutations.begin(), mutations.end(),
                      [](const Mutation& m) { return m.table->HasOnlineLayout(); });
}

void Coordinator::ApplyBatchAsync(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                                  WriteDone done) {
  if (!AppliesWithoutWaiting(mutations, consistency)) {
    std::vector<std::string> warnings;
    Status s = ApplyBatch(mutations, &warnings, consistency);
    return done(std::move(s), std::move(warnings));
  }
  const std::vector<IndexedWrite> indexed = WritesWithDerivedRows(mutations);
  if (!indexed.empty()) return ApplyWithDerivedRowsAsync(mutations, indexed, consistency, std::move(done));
  ApplyBaseAsync(mutations, consistency, std::move(done));
}

// ---- DDL ----

Result<std::shared_ptr<const TableSchema>> Coordinator::CreateIndex(const std::string& keyspace,
                                                                    const std::string& table, IndexDef index,
                                                                    bool build) {
  // Writes maintain the index from the moment the catalog has it.
  if (!index.is_vector()) any_derived_.store(true, std::memory_order_release);
  auto altered = db_->CreateIndex(keyspace, table, std::move(index));
  if (!altered.ok()) {
    RefreshDerivedFlag();
    return altered;
  }
  const IndexDef& created = (*altered)->indexes.back();
  if (build && !created.is_vector()) {
    TESSERA_RETURN_IF_ERROR(db_->engine()->MetaPut(build_markers::IndexKey(keyspace, created.name), table));
    StartIndexBuild(keyspace, table, created.name);
  }
  return altered;
}

Result<std::shared_ptr<const TableSchema>> Coordinator::DropIndex(const std::string& keyspace,
                                                                  const std::string& name) {
  auto altered = db_->DropIndex(keyspace, name);
  if (!altered.ok()) return altered;
  TESSERA_RETURN_IF_ERROR(db_->engine()->MetaDelete(build_markers::IndexKey(keyspace, name)));
  RefreshDerivedFlag();
  return altered;
}

bool Coordinator::IndexBuilt(const std::string& keyspace, const std::string& name) const {
  std::lock_guard<std::mutex> lock(builds_mu_);
  return building_indexes_.count({keyspace, name}) == 0;
}

Result<std::shared_ptr<const TableSchema>> Coordinator::CreateView(TableSchema view, bool build) {
  const std::string keyspace = view.keyspace, name = view.name;
  const std::string base = view.view ? view.view->base_table : std::string();
  any_derived_.store(true, std::memory_order_release);  // writes maintain it once the base lists it
  auto created = db_->CreateView(std::move(view));
  if (!created.ok()) {
    RefreshDerivedFlag();
    return created;
  }
  if (build) {
    TESSERA_RETURN_IF_ERROR(db_->engine()->MetaPut(build_markers::ViewKey(keyspace, name), base));
    StartViewBuild(keyspace, base, name);
  }
  return created;
}

Status Coordinator::DropView(const std::string& keyspace, const std::string& name) {
  TESSERA_RETURN_IF_ERROR(db_->DropView(keyspace, name));
  TESSERA_RETURN_IF_ERROR(db_->engine()->MetaDelete(build_markers::ViewKey(keyspace, name)));
  RefreshDerivedFlag();
  return Status::OK();
}

Coordinator::ViewBuildState Coordinator::ViewBuild(const std::string& keyspace, const std::string& view) const {
  std::lock_guard<std::mutex> lock(builds_mu_);
  auto it = building_views_.find({keyspace, view});
  if (it == building_views_.end()) return {};
  return {false, it->second};
}

}  // namespace tessera
