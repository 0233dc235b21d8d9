// QueryProcessor: runs QUERY, PREPARE, EXECUTE and BATCH requests against
// the Database — the RequestProcessor behind the CQL server.
//
//  - QUERY: parse, bind the request's values, execute, reply with RESULT
//    (Void, Rows with paging, Set_keyspace, Schema_change) or ERROR.
//  - PREPARE: parse once, cache under a 16-byte id derived from the
//    keyspace and text; reply with bind-variable metadata (names, types, and
//    partition-key bind indexes for token-aware routing) and result metadata.
//  - EXECUTE: run a cached statement; an unknown id is ERROR Unprepared
//    (0x2500) carrying the id as sent, so drivers re-prepare.
//  - BATCH: INSERT / UPDATE / DELETE statements (text or prepared) applied
//    as one atomic write (logged and unlogged alike on one node).
// Writes pass the write guardrails first (write_guardrails.h) and reads the
// tombstone guardrail (select_statement.h); their warnings ride on the reply
// (protocol Warning flag) and are logged. CREATE and ALTER TABLE carry the
// design lint's findings as warnings (db/schema_lint.h). Schema changes are reported through
// `on_schema_change` (SCHEMA_CHANGE events), with `originating` true on the
// node that ran the statement and false for one applied from the schema log.
// With an AuthService: AUTH_RESPONSE logs in (SASL PLAIN), every statement
// is checked first (access_control.h), role and permission statements run
// (auth_statements.h), and a role that creates a keyspace, table or role
// gets every permission on it; a drop removes the grants on what it dropped.
//
// Thread safety: Process is thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "auth/auth_service.h"
#include "cql/executor/conditional_writes.h"
#include "cql/executor/replication_changer.h"
#include "cql/executor/schema_coordinator.h"
#include "cql/executor/system_tables.h"
#include "cql/functions/user_functions.h"
#include "cql/parser/raw_statements.h"
#include "cql/protocol/request_processor.h"
#include "cql/protocol/responses.h"
#include "coordinator/coordinator.h"
#include "db/database.h"
#include "tracing/trace_store.h"

namespace tessera::cql {

class QueryProcessor : public RequestProcessor {
 public:
  // Writes, and the DDL of indexes and views, go through `coordinator`;
  // schema and reads through its database.
  // REQUIRES: coordinator (with its database) and auth (when given) outlive
  // the processor.
  using SchemaChangeListener = std::function<void(const SchemaChange&, bool originating)>;
  QueryProcessor(Coordinator* coordinator, NodeInfo node, SchemaChangeListener on_schema_change = {},
                 auth::AuthService* auth = nullptr);
  // Never throws: an exception escaping a statement answers ServerError
  // (0x0000) for that request alone and is logged with the statement.
  // With flags.tracing, or drawn by the node's trace probability
  // (NodeInfo::traces), the request is traced: its steps go to a
  // TraceSession and the reply carries its id.
  Reply Process(ConnectionState& connection, const Request& request, RequestFlags flags) override;
  // INSERT, UPDATE, DELETE and BATCH answer when their replicas do
  // (Coordinator::ApplyBatchAsync; with conditions, the chain of
  // ConditionalWrites::RunAsync); on a cluster node, so does a SELECT whose
  // reads are whole rows, partitions' slices, a scan's page or an index
  // scan's (DeferredRead; Coordinator::ReadRowAsync, ReadSliceAsync,
  // ScanRangeAsync, RunIndexScanAsync; with GROUP BY or at SERIAL, run again
  // for each read it makes, its Paxos prepare first, DeferredRead::replay);
  // everything else as Process.
  void ProcessAsync(ConnectionState& connection, const Request& request, RequestFlags flags,
                    std::function<void(Reply)> done) override;
  // False only for an EXECUTE on a cluster node of a prepared statement
  // whose runs so far all went the way that answers from replica answers
  // (Prepared::runs); true for everything else, including
  // a statement's first run.
  bool MayWait(const ConnectionState& connection, const Request& request) override;
  std::string Authenticator() const override;
  // In a cluster: the coordinator every schema statement goes through.
  // REQUIRES: set before the first request; outlives the processor.
  void set_schema_coordinator(SchemaCoordinator* coordinator) { schema_coordinator_ = coordinator; }
  // A cluster node's: ALTER KEYSPACE changing replication answers once the
  // tablets have the new factors. REQUIRES: outlives the processor's use.
  void set_replication_changer(ReplicationChanger* changer) { replication_changer_ = changer; }
  // Applies a schema statement another node ran (the cluster's schema log),
  // in `keyspace`, without the coordinator, and reports its change as a
  // SCHEMA_CHANGE event to this node's clients. Errors: SyntaxError,
  // InvalidArgument for a statement that is not a schema statement, and
  // those of the statement (AlreadyExists when this node already has it).
  // `table_uuid`: the uuid a CREATE TABLE gives the table (the one the first
  // node chose); empty otherwise.
  Status ApplySchemaStatement(const std::string& keyspace, const std::string& statement,
                              const std::string& table_uuid = {});
  // Allows CREATE FUNCTION / AGGREGATE (Lua, cql/functions/user_functions.h)
  // and calls of what they create, as Cassandra's
  // enable_user_defined_functions: true; off by default.
  // REQUIRES: called before the first request.
  void EnableUserDefinedFunctions(LuaLimits limits = {});
  // The schema version system.local reports (16 bytes; see SystemTables).
  std::string SchemaVersion() const { return system_tables_.SchemaVersion(); }

 private:
  // Where a reply goes when it comes later (ProcessAsync's `done`). The
  // functions that take one answer nullopt when they moved it into a write
  // that will call it, else the reply; a null pointer: always the reply.
  using ReplyDone = std::function<void(Reply)>;
  // The request's trace (tracing/trace_session.h); null when not traced.
  using Trace = std::shared_ptr<tracing::TraceSession>;
  std::optional<Reply> ProcessRequest(ConnectionState& connection, const Request& request, ReplyDone* later,
                                      const Trace& trace);
  // A trace for a QUERY, EXECUTE, BATCH or PREPARE when asked (`requested`)
  // or drawn; null otherwise and without a store.
  Trace BeginTrace(const ConnectionState& connection, const Request& request, bool requested);
  // nextval's source for statements run in `keyspace` (BindContext::next_value).
  std::function<::tessera::Result<int64_t>(const std::string&)> NextValue(const std::string& keyspace);
  struct Prepared {
    std::string query;
    std::string keyspace;
    ParsedStatement parsed;
    // The table a SELECT / INSERT / UPDATE / DELETE names, at PREPARE, and
    // its version: its uuid and columns (names and types); null and empty
    // for other statements. A table dropped and re-created under the name, or altered
    // (a column added, dropped or renamed), has another: the statement is
    // evicted and EXECUTE answers Unprepared, so the driver prepares it again
    // against the new columns (as Cassandra evicts a dropped or altered
    // table's prepared statements, CASSANDRA-7910).
    std::shared_ptr<const TableSchema> table;
    std::string table_version;
    // The v5 result metadata id of its result columns at PREPARE (16 bytes).
    std::string result_metadata_id;
    // How its runs went on a cluster node (Run's `runs`; MayWait): unknown
    // until a run reaches its reads or writes; then kAnswersLater while
    // every run went the way that answers from replica answers, and
    // kAnswersOnThread, for good, once one went the way that may wait on its
    // thread. Shared by the copies FindPrepared refreshes; reset with a
    // new schema object (an index added changes the write path).
    std::shared_ptr<std::atomic<int>> runs = std::make_shared<std::atomic<int>>(kRunsUnknown);
  };
  static constexpr int kRunsUnknown = 0, kAnswersLater = 1, kAnswersOnThread = 2;
  // Finds a prepared statement that still fits the schema; else evicts it and returns null.
  std::shared_ptr<const Prepared> FindPrepared(const std::string& id, const std::string& connection_keyspace);
  std::optional<Reply> Query(ConnectionState& conn, const std::string& text, const QueryParameters& params,
                             ReplyDone* later, const Trace& trace);
  Reply Prepare(ConnectionState& conn, const std::string& text, const Trace& trace);
  // `result_metadata_id`: v5's, what the client decodes rows with; when it
  // is not the statement's, rows come with the Metadata_changed flag.
  std::optional<Reply> Execute(ConnectionState& conn, const std::string& id,
                               const std::optional<std::string>& result_metadata_id, const QueryParameters& params,
                               ReplyDone* later, const Trace& trace);
  std::optional<Reply> Batch(ConnectionState& conn, const BatchRequest& batch, ReplyDone* later, const Trace& trace);
  // `text` is the statement as the client sent it (the schema log records it).
  // `runs`, when given, is set to how the statement ran on a cluster node
  // (Prepared::runs): kAnswersLater when its reads or writes went the way
  // that answers from replica answers, kAnswersOnThread when they went the
  // way that may wait on this thread; left alone when no read or write was
  // reached (an error first, a statement of another kind).
  std::optional<Reply> Run(ConnectionState& conn, const ParsedStatement& parsed, const std::string& text,
                           const QueryParameters& params, ReplyDone* later, const Trace& trace,
                           int* runs = nullptr);
  // Runs a schema statement on this node; nullopt for any other statement.
  // `originating`: false when replaying another node's statement (that node
  // builds a new index's entries).
  std::optional<::tessera::Result<SchemaOutcome>> ExecuteSchema(const RawStatement& s, const std::string& keyspace,
                                                                const std::string& table_uuid = {},
                                                                bool originating = true);
  // Checks the write guardrails (write_guardrails.h), applies, and replies with their warnings.
  // Applies `mutations` at `consistency` (the request's level and write type).
  // With `later`, answers through it once the replicas did (nullopt).
  std::optional<Reply> ApplyWrites(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                                   ReplyDone* later);
  // Runs a conditional statement (`batch` false: statements[0]) or a BATCH
  // with conditions (conditional_writes.h) and replies with its [applied]
  // rows. Its writes go through the write guardrails, then out at the
  // consistency ConditionalWrites passes (the request's level, write type
  // CAS, its Paxos round on a cluster). On a cluster node with `later`, it
  // answers through it once the replicas did (nullopt), holding no thread;
  // else it waits here. `*answers_later` (when given) says which.
  std::optional<Reply> Conditional(std::vector<RawStatement> statements, std::vector<WriteContext> contexts, bool batch,
                                   ReplyDone* later, bool* answers_later = nullptr);
  Reply Error(const Status& status, const RawStatement* statement = nullptr) const;
  // A SELECT's reply: its rows, or its error (ReadFailure for too many
  // tombstones; `consistency` is the request's, as on the wire).
  Reply SelectReply(const ::tessera::Result<ResultSet>& rs, Consistency consistency, bool skip_metadata) const;
  // A ServerError (0x0000) reply: what a request whose execution threw answers.
  static Reply ServerError(std::string message);
  // The second run of a SELECT whose row, slice or range reads `ctx`
  // deferred (`deferred`): reads them without holding this thread, then runs
  // `sel` again with them (and, for a page read in steps, on from each step's
  // paging state) and answers through `later` (nullopt).
  std::optional<Reply> SelectAfterDeferredRead(const SelectStatement& sel, const SelectContext& ctx,
                                               DeferredRead deferred, const QueryParameters& params,
                                               ReplyDone* later);
  // A SELECT between its runs (query_processor.cc): reads what its last run
  // deferred without holding a thread, then runs it again (RunDeferredSelect)
  // and replies, or, for a page read in steps, goes on with the next step.
  struct DeferredSelect;
  void ReadDeferred(const std::shared_ptr<DeferredSelect>& select);
  void ReadReplayed(const std::shared_ptr<DeferredSelect>& select);
  void RunDeferredSelect(const std::shared_ptr<DeferredSelect>& select);
  Reply AuthResponse(ConnectionState& conn, const AuthResponseRequest& request);
  // Grants on what a successful CREATE made, and drops those on what a DROP removed.
  void UpdateGrants(const std::string& user, const RawStatement& s, const std::string& keyspace);
  // The design lint's findings on the table a CREATE / ALTER TABLE made, and Cassandra's warning on
  // CREATE MATERIALIZED VIEW, as client warnings (db/schema_lint.h).
  std::vector<std::string> DesignLintWarnings(const RawStatement& s, const std::string& keyspace) const;

  Coordinator* coordinator_;
  Database* db_;  // coordinator_->database()
  auth::AuthService* auth_;
  tracing::TraceStore* const traces_;  // NodeInfo::traces
  const bool cluster_;  // a cluster node (NodeInfo::cluster given)
  const ClusterView* cluster_view_;
  const std::string local_dc_;
  const std::string local_address_bytes_;  // this node's CQL address, 4 or 16 bytes (v5 failure reasons)
  SystemTables system_tables_;
  SchemaCoordinator* schema_coordinator_ = nullptr;
  ReplicationChanger* replication_changer_ = nullptr;
  ConditionalWrites conditional_writes_{coordinator_};
  // In a cluster: Invalid for CREATE / ALTER KEYSPACE asking more replicas
  // of a data center than it has nodes (members, alive or not), and for an
  // ALTER KEYSPACE changing a data center's factor by more than 1.
  Status CheckReplicationFits(const RawStatement& s) const;
  SchemaChangeListener on_schema_change_;
  std::unique_ptr<UserFunctions> functions_;  // never null; disabled unless EnableUserDefinedFunctions
  // What statements resolve user-defined functions with: null while disabled.
  const UserFunctions* user_functions() const { return functions_->enabled() ? functions_.get() : nullptr; }
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Prepared>> prepared_;
};

// Bind-variable specs of a parsed statement (in marker order) and the bind
// indexes of the partition-key columns (empty unless all are bound by = ?).
// Errors: InvalidArgument (unknown table or column).
Status DescribeBindMarkers(const Database& db, const VirtualTables* vt, const ParsedStatement& parsed,
                           const std::string& keyspace, std::vector<ColumnSpec>* markers,
                           std::vector<uint16_t>* partition_key_indexes);

}  // namespace tessera::cql
