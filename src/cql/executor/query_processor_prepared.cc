// QueryProcessor's prepared statements: PREPARE (ids, bind and result
// metadata, v5's result metadata id), the cache and its eviction when a
// table's columns change (CASSANDRA-7910), and EXECUTE (the keyspace it was
// prepared in, v5's Metadata_changed). The rest of the processor is in
// query_processor.cc.
#include <type_traits>
#include <variant>

#include "common/bytes.h"
#include "cql/executor/query_processor.h"
#include "cql/executor/select_statement.h"
#include "cql/parser/parser.h"
#include "keys/murmur3.h"
#include "tracing/trace_session.h"

namespace tessera::cql {
namespace {

// 16 bytes: the 128-bit Murmur3 of `text`, little-endian halves.
std::string Hash16(const std::string& text) {
  auto h = CassandraMurmur3(text);
  std::string id;
  for (int i = 0; i < 8; ++i) id.push_back(static_cast<char>(static_cast<uint64_t>(h.h1) >> (8 * i)));
  for (int i = 0; i < 8; ++i) id.push_back(static_cast<char>(static_cast<uint64_t>(h.h2) >> (8 * i)));
  return id;
}

std::string PreparedId(const std::string& keyspace, const std::string& query) { return Hash16(keyspace + '\0' + query); }

// v5's result metadata id (§4.2.5.4): a hash of what a client decodes rows
// with, the columns' tables, names and types, in order.
std::string ResultMetadataId(const std::vector<ColumnSpec>& columns) {
  std::string text;
  for (const auto& c : columns) text += c.keyspace + '.' + c.table + '.' + c.name + ':' + c.type.ToCql() + '\0';
  return Hash16(text);
}

// The stored table a DML statement names; null for other statements and for
// tables that do not resolve (system tables among them).
std::shared_ptr<const TableSchema> StatementTable(const Database& db, const ParsedStatement& parsed,
                                                  const std::string& keyspace) {
  const QualifiedName* name = std::visit(
      [](const auto& s) -> const QualifiedName* {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, SelectStatement> || std::is_same_v<S, InsertStatement> ||
                      std::is_same_v<S, UpdateStatement> || std::is_same_v<S, DeleteStatement>) {
          return &s.table;
        }
        return nullptr;
      },
      parsed.statement);
  if (!name) return nullptr;
  auto table = ResolveTable(db, *name, keyspace);
  return table.ok() ? *table : nullptr;
}

// The uuid and the columns: a column added, dropped or renamed changes what
// SELECT * returns and what markers mean (CASSANDRA-7910).
std::string TableVersion(const TableSchema& table) {
  std::string version = table.uuid;
  for (const auto& c : table.columns) version += "|" + c.name + ":" + c.type.ToCql();
  return version;
}

}  // namespace

std::shared_ptr<const QueryProcessor::Prepared> QueryProcessor::FindPrepared(const std::string& id,
                                                                             const std::string& connection_keyspace) {
  std::shared_ptr<const Prepared> p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prepared_.find(id);
    if (it == prepared_.end()) return nullptr;
    p = it->second;
  }
  if (!p->table) return p;
  const std::string& ks = p->keyspace.empty() ? connection_keyspace : p->keyspace;
  std::shared_ptr<const TableSchema> now = StatementTable(*db_, p->parsed, ks);
  // The same schema object: nothing changed (the common case, no string work).
  if (now == p->table) return p;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = prepared_.find(id);
  const bool current = it != prepared_.end() && it->second == p;
  if (now && TableVersion(*now) == p->table_version) {
    // A change that keeps the columns (options, an index): keep the statement
    // and remember the new schema object, so the next EXECUTE compares pointers again.
    auto refreshed = std::make_shared<Prepared>(*p);
    refreshed->table = std::move(now);
    refreshed->runs = std::make_shared<std::atomic<int>>(kRunsUnknown);
    if (current) it->second = refreshed;
    return refreshed;
  }
  if (current) prepared_.erase(it);
  return nullptr;
}

Reply QueryProcessor::Prepare(ConnectionState& conn, const std::string& text, const Trace& trace) {
  if (trace) trace->Event("Parsing " + text.substr(0, 1000));
  auto parsed = ParseStatement(text);
  if (!parsed.ok()) return Error(parsed.status());
  if (trace) trace->Event("Preparing statement");
  std::vector<ColumnSpec> markers, result_columns;
  std::vector<uint16_t> pk_indexes;
  Status s = DescribeBindMarkers(*db_, &system_tables_, *parsed, conn.keyspace(), &markers, &pk_indexes);
  if (!s.ok()) return Error(s);
  if (const auto* sel = std::get_if<SelectStatement>(&parsed->statement)) {
    const std::string ks = sel->table.keyspace.empty() ? conn.keyspace() : sel->table.keyspace;
    auto table = system_tables_.Find(ks, sel->table.name);
    if (!table) {
      auto resolved = ResolveTable(*db_, sel->table, conn.keyspace());
      if (!resolved.ok()) return Error(resolved.status());
      table = *resolved;
    }
    auto cols = SelectColumns(*table, *sel, user_functions());
    if (!cols.ok()) return Error(cols.status());
    result_columns = *cols;
  }
  std::shared_ptr<const TableSchema> table = StatementTable(*db_, *parsed, conn.keyspace());
  if (table && table->is_view() && !std::holds_alternative<SelectStatement>(parsed->statement)) {
    return Error(Status::InvalidArgument("Cannot directly modify a materialized view"));  // refused at PREPARE, as Cassandra
  }
  std::string id = PreparedId(conn.keyspace(), text);
  std::string version = table ? TableVersion(*table) : "";
  std::string metadata_id = ResultMetadataId(result_columns);
  {
    std::lock_guard<std::mutex> lock(mu_);
    prepared_[id] = std::make_shared<const Prepared>(Prepared{text, conn.keyspace(), std::move(parsed).value(),
                                                              std::move(table), std::move(version), metadata_id});
  }
  return Reply{Opcode::kResult,
               EncodePreparedResult(id, conn.protocol_version() >= kProtocolV5 ? std::optional(metadata_id) : std::nullopt,
                                    markers, pk_indexes, result_columns),
               {}};
}

bool QueryProcessor::MayWait(const ConnectionState& /*connection*/, const Request& request) {
  const auto* e = std::get_if<ExecuteRequest>(&request);
  if (!cluster_ || !e) return true;
  std::shared_ptr<const Prepared> p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prepared_.find(e->id);
    if (it == prepared_.end()) return true;
    p = it->second;
  }
  return p->runs->load(std::memory_order_relaxed) != kAnswersLater;
}

std::optional<Reply> QueryProcessor::Execute(ConnectionState& conn, const std::string& id,
                                             const std::optional<std::string>& result_metadata_id,
                                             const QueryParameters& params, ReplyDone* later, const Trace& trace) {
  std::shared_ptr<const Prepared> p = FindPrepared(id, conn.keyspace());
  if (!p) {
    ErrorResponse e{ErrorCode::kUnprepared, "Prepared query with ID " + ToHex(id) + " not found (either the query was not "
                    "prepared on this host (maybe the host has been restarted?) or you have prepared too many queries "
                    "and it has been evicted from the internal cache)"};
    e.unprepared_id = id;
    return Reply{Opcode::kError, EncodeError(e), {}};
  }
  // A prepared statement runs in the keyspace it was prepared in when it names none.
  ConnectionState scoped(conn, p->keyspace.empty() ? conn.keyspace() : p->keyspace);
  // v5: the client decodes rows with other metadata than the statement's
  // now: send the metadata, flagged as changed, with the new id (§4.2.5.2).
  const bool metadata_changed = conn.protocol_version() >= kProtocolV5 && result_metadata_id &&
                                *result_metadata_id != p->result_metadata_id;
  auto mark_changed = [id = p->result_metadata_id](Reply reply) {
    if (reply.opcode == Opcode::kResult) reply.body = WithChangedMetadata(reply.body, id);
    return reply;
  };
  QueryParameters with_metadata;
  bool wrapped = false;
  if (metadata_changed) {
    with_metadata = params;
    with_metadata.skip_metadata = false;
    // A deferred reply, and in ProcessAsync the immediate one too, go
    // through `*later`; in Process (no `later`) the immediate one is marked below.
    if (later && *later) {
      *later = [done = std::move(*later), mark_changed](Reply reply) { done(mark_changed(std::move(reply))); };
      wrapped = true;
    }
  }
  int runs = kRunsUnknown;
  std::optional<Reply> r =
      Run(scoped, p->parsed, p->query, metadata_changed ? with_metadata : params, later, trace, &runs);
  // What MayWait goes by: once a run went the way that may wait, for good.
  if (runs == kAnswersOnThread) {
    p->runs->store(kAnswersOnThread, std::memory_order_relaxed);
  } else if (runs == kAnswersLater) {
    int unknown = kRunsUnknown;
    p->runs->compare_exchange_strong(unknown, kAnswersLater, std::memory_order_relaxed);
  }
  if (std::holds_alternative<UseStatement>(p->parsed.statement)) conn.set_keyspace(scoped.keyspace());
  if (metadata_changed && !wrapped && r) r = mark_changed(std::move(*r));
  return r;
}

}  // namespace tessera::cql
