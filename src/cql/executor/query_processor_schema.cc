// The schema side of QueryProcessor (query_processor.h): schema statements
// run on this node (ExecuteSchema), the cluster's check that a keyspace's
// replication fits its nodes and changes one replica at a time
// (CheckReplicationFits), statements another node ran (ApplySchemaStatement),
// and the design lint's warnings on CREATE / ALTER TABLE.
#include <algorithm>
#include <cstdlib>
#include <map>

#include "cql/executor/function_statements.h"
#include "cql/executor/index_statements.h"
#include "cql/executor/query_processor.h"
#include "cql/executor/schema_statements.h"
#include "cql/executor/type_statements.h"
#include "cql/executor/view_statements.h"
#include "cql/parser/parser.h"
#include "db/schema_lint.h"

namespace tessera::cql {
namespace {

bool IsNetworkTopology(const std::map<std::string, std::string>& replication) {
  auto cls = replication.find("class");
  return cls != replication.end() && cls->second.find("NetworkTopology") != std::string::npos;
}

// A keyspace's replication factor per data center, SimpleStrategy's under
// `simple_dc` (a cluster's tablets place it in one group of every node).
std::map<std::string, int> FactorsByDataCenter(const std::map<std::string, std::string>& replication,
                                               const std::string& simple_dc) {
  const bool nts = IsNetworkTopology(replication);
  std::map<std::string, int> out;
  for (const auto& [key, value] : replication) {
    if (key == "class" || (nts && key == "replication_factor") || (!nts && key != "replication_factor")) continue;
    out[nts ? key : simple_dc] = std::atoi(value.c_str());
  }
  return out;
}

}  // namespace

std::vector<std::string> QueryProcessor::DesignLintWarnings(const RawStatement& s, const std::string& keyspace) const {
  if (std::holds_alternative<CreateViewStatement>(s)) return {kViewUsageWarning};  // Cassandra's client warning
  const QualifiedName* name = nullptr;
  if (const auto* x = std::get_if<CreateTableStatement>(&s)) name = &x->table;
  if (const auto* x = std::get_if<AlterTableStatement>(&s)) name = &x->table;
  if (!name) return {};
  auto table = ResolveTable(*db_, *name, keyspace);
  if (!table.ok()) return {};
  std::vector<std::string> warnings;
  for (const auto& finding : LintTableDesign(**table, db_->guardrails())) warnings.push_back(LintWarning(finding));
  return warnings;
}

std::optional<::tessera::Result<SchemaOutcome>> QueryProcessor::ExecuteSchema(const RawStatement& s,
                                                                              const std::string& ks,
                                                                              const std::string& table_uuid,
                                                                              bool originating) {
  if (const auto* x = std::get_if<CreateKeyspaceStatement>(&s)) return ExecuteCreateKeyspace(*db_, *x);
  if (const auto* x = std::get_if<CreateIndexStatement>(&s)) return ExecuteCreateIndex(*coordinator_, *x, ks, originating);
  if (const auto* x = std::get_if<CreateViewStatement>(&s)) return ExecuteCreateView(*coordinator_, *x, ks, originating);
  if (const auto* x = std::get_if<AlterKeyspaceStatement>(&s)) return ExecuteAlterKeyspace(*db_, *x);
  if (const auto* x = std::get_if<CreateTableStatement>(&s)) return ExecuteCreateTable(*db_, *x, ks, table_uuid);
  if (const auto* x = std::get_if<AlterTableStatement>(&s)) return ExecuteAlterTable(*db_, *x, ks);
  if (const auto* x = std::get_if<CreateTypeStatement>(&s)) return ExecuteCreateType(*db_, *x, ks);
  if (const auto* x = std::get_if<AlterTypeStatement>(&s)) return ExecuteAlterType(*db_, *x, ks);
  if (const auto* x = std::get_if<FunctionStatement>(&s)) return ExecuteFunctionStatement(*db_, *functions_, *x, ks);
  if (const auto* x = std::get_if<DropStatement>(&s)) {
    if (x->target == DropStatement::Target::kType) return ExecuteDropType(*db_, *x, ks);
    if (x->target == DropStatement::Target::kIndex) return ExecuteDropIndex(*coordinator_, *x, ks);
    if (x->target == DropStatement::Target::kView) return ExecuteDropView(*coordinator_, *x, ks);
    return ExecuteDrop(*db_, *x, ks);
  }
  return std::nullopt;
}

Status QueryProcessor::CheckReplicationFits(const RawStatement& s) const {
  const std::string* name = nullptr;
  const std::vector<Property>* properties = nullptr;
  if (const auto* c = std::get_if<CreateKeyspaceStatement>(&s)) {
    name = &c->name;
    properties = &c->properties;
  } else if (const auto* a = std::get_if<AlterKeyspaceStatement>(&s)) {
    name = &a->name;
    properties = &a->properties;
  }
  if (!name || !cluster_view_) return Status::OK();
  if (std::none_of(properties->begin(), properties->end(), [](const Property& p) { return p.name == "replication"; })) {
    return Status::OK();
  }
  auto ks = BuildKeyspace(*name, *properties);
  if (!ks.ok()) return Status::OK();  // the statement reports its own error
  std::map<std::string, int> nodes{{local_dc_, 1}};
  int all = 1;
  for (const auto& peer : cluster_view_->Peers()) {
    ++nodes[peer.data_center];
    ++all;
  }
  const bool nts = IsNetworkTopology(ks->replication);
  for (const auto& [key, factor] : FactorsByDataCenter(ks->replication, "")) {
    const int available = nts ? (nodes.count(key) ? nodes[key] : 0) : all;
    if (factor > available) {
      return Status::InvalidArgument("Replication factor " + std::to_string(factor) + " exceeds the number of nodes " +
                                     std::to_string(available) + (nts ? " in data center " + key : " of the cluster"));
    }
  }
  // Tablets get or lose one replica per data center at a time, so that a
  // quorum of the old replicas and one of the new always overlap (as
  // ScyllaDB limits an ALTER KEYSPACE of a tablets keyspace).
  auto old = db_->catalog().GetKeyspace(*name);
  if (!std::holds_alternative<AlterKeyspaceStatement>(s) || !old.ok()) return Status::OK();
  auto before = FactorsByDataCenter(old->replication, local_dc_);
  auto after = FactorsByDataCenter(ks->replication, local_dc_);
  for (const auto& [dc, factor] : after) before.try_emplace(dc, 0);
  for (const auto& [dc, factor] : before) {
    const int next = after.count(dc) ? after.at(dc) : 0;
    if (std::abs(next - factor) > 1) {
      return Status::InvalidArgument("Cannot change the replication factor of data center " + dc + " from " +
                                     std::to_string(factor) + " to " + std::to_string(next) +
                                     ": it changes by at most 1 at a time (one replica added to or dropped from "
                                     "every tablet), so that old and new quorums overlap");
    }
  }
  return Status::OK();
}

Status QueryProcessor::ApplySchemaStatement(const std::string& keyspace, const std::string& statement,
                                            const std::string& table_uuid) {
  auto parsed = ParseStatement(statement);
  if (!parsed.ok()) return parsed.status();
  auto r = ExecuteSchema(parsed->statement, keyspace, table_uuid, /*originating=*/false);
  if (!r) return Status::InvalidArgument("not a schema statement: " + statement.substr(0, 200));
  if (!r->ok()) return r->status();
  if ((*r)->change && on_schema_change_) on_schema_change_(*(*r)->change, /*originating=*/false);
  return Status::OK();
}

}  // namespace tessera::cql
