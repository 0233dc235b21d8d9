#include "cql/executor/query_processor.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <type_traits>
#include <variant>

#include "common/bytes.h"
#include "cql/executor/access_control.h"
#include "cql/executor/auth_statements.h"
#include "cql/executor/error_mapping.h"
#include "cql/executor/function_statements.h"
#include "cql/executor/modification_statements.h"
#include "cql/executor/describe.h"
#include "cql/executor/index_statements.h"
#include "cql/executor/schema_statements.h"
#include "cql/executor/system_keyspaces.h"
#include "cql/executor/type_statements.h"
#include "cql/executor/select_statement.h"
#include "cql/executor/write_guardrails.h"
#include "cql/parser/parser.h"
#include "db/schema_lint.h"
#include "tablets/request_consistency.h"
#include "tracing/trace_session.h"

#include <spdlog/spdlog.h>

namespace tessera::cql {
namespace {

Reply ResultReply(std::string body) { return Reply{Opcode::kResult, std::move(body), {}}; }

// An ERROR reply whose body depends on the protocol version (Reply::error).
Reply VersionedError(ErrorResponse e) {
  Reply reply{Opcode::kError, EncodeError(e), {}};
  reply.error = std::make_shared<const ErrorResponse>(std::move(e));
  return reply;
}

std::string EncodeRows(const ResultSet& rs, bool skip_metadata) {
  RowsWriter w(rs.columns, rs.paging_state, skip_metadata);
  for (const auto& row : rs.rows) w.AddRow(row);
  return w.Finish();
}

}  // namespace

Reply QueryProcessor::ServerError(std::string message) {
  ErrorResponse e;
  e.code = ErrorCode::kServerError;
  e.message = std::move(message);
  return Reply{Opcode::kError, EncodeError(e), {}};
}

QueryProcessor::QueryProcessor(Coordinator* coordinator, NodeInfo node, SchemaChangeListener on_schema_change,
                               auth::AuthService* auth)
    : coordinator_(coordinator),
      db_(&coordinator->database()),
      auth_(auth),
      traces_(node.traces),
      cluster_(node.cluster != nullptr),
      cluster_view_(node.cluster),
      local_dc_(node.data_center),
      local_address_bytes_(InetAddressBytes(node.rpc_address)),
      system_tables_(coordinator, std::move(node)),
      on_schema_change_(std::move(on_schema_change)),
      functions_(std::make_unique<UserFunctions>(&db_->catalog(), /*enabled=*/false)) {}

void QueryProcessor::EnableUserDefinedFunctions(LuaLimits limits) {
  functions_ = std::make_unique<UserFunctions>(&db_->catalog(), /*enabled=*/true, limits);
}

std::string QueryProcessor::Authenticator() const {
  return auth_ && auth_->authentication_required() ? auth::kPasswordAuthenticatorClass : "";
}

Reply QueryProcessor::AuthResponse(ConnectionState& conn, const AuthResponseRequest& request) {
  if (!auth_ || !auth_->authentication_required()) return Reply{Opcode::kAuthSuccess, EncodeAuthSuccess(std::nullopt), {}};
  auto user = auth_->Authenticate(request.token.value_or(""), conn.client_address());
  if (!user.ok()) {
    spdlog::info("failed login from {}: {}", conn.client_address(), user.status().message());
    return Error(user.status());
  }
  conn.set_user(*user);
  return Reply{Opcode::kAuthSuccess, EncodeAuthSuccess(std::nullopt), {}};
}

void QueryProcessor::UpdateGrants(const std::string& user, const RawStatement& s, const std::string& keyspace) {
  if (!auth_) return;
  Status st;
  if (const auto* x = std::get_if<CreateKeyspaceStatement>(&s)) {
    st = auth_->OnResourceCreated(user, auth::Resource::Keyspace(x->name));
  } else if (const auto* x = std::get_if<CreateTableStatement>(&s)) {
    st = auth_->OnResourceCreated(user, auth::Resource::Table(x->table.keyspace.empty() ? keyspace : x->table.keyspace,
                                                              x->table.name));
  } else if (const auto* x = std::get_if<DropStatement>(&s)) {
    st = auth_->OnResourceDropped(x->target == DropStatement::Target::kKeyspace
                                      ? auth::Resource::Keyspace(x->name.name)
                                      : auth::Resource::Table(x->name.keyspace.empty() ? keyspace : x->name.keyspace,
                                                              x->name.name));
  }
  if (!st.ok()) spdlog::warn("updating permissions after a schema change failed: {}", st.ToString());
}

namespace {

RequestConsistency ConsistencyOf(Consistency level, WriteType type = WriteType::kSimple) {
  return RequestConsistency{static_cast<ConsistencyLevel>(level), type};
}

// The write type a batch's WriteTimeout names (native protocol v4 §9).
WriteType BatchWriteType(BatchStatement::Type type) {
  switch (type) {
    case BatchStatement::Type::kCounter: return WriteType::kCounter;
    case BatchStatement::Type::kUnlogged: return WriteType::kUnloggedBatch;
    default: return WriteType::kBatch;
  }
}

}  // namespace

namespace {

// What the log says of a request whose execution threw: its statement text,
// or the prepared id it executes.
std::string DescribeRequest(const Request& request) {
  if (const auto* q = std::get_if<QueryRequest>(&request)) return "QUERY " + q->query;
  if (const auto* p = std::get_if<PrepareRequest>(&request)) return "PREPARE " + p->query;
  if (const auto* e = std::get_if<ExecuteRequest>(&request)) return "EXECUTE prepared id " + ToHex(e->id);
  if (const auto* b = std::get_if<BatchRequest>(&request)) {
    std::string out = "BATCH of " + std::to_string(b->statements.size());
    for (const auto& entry : b->statements) out += entry.prepared ? "; prepared id " + ToHex(entry.query_or_id) : "; " + entry.query_or_id;
    return out;
  }
  return "AUTH_RESPONSE";
}

}  // namespace

Reply QueryProcessor::Process(ConnectionState& conn, const Request& request, RequestFlags flags) {
  // The safety net: an exception escaping a statement is a bug, but it ends
  // that request alone (ServerError 0x0000), never the process. The fuzzers
  // still fail on any ServerError.
  const Trace trace = BeginTrace(conn, request, flags.tracing);
  Reply reply;
  try {
    reply = *ProcessRequest(conn, request, nullptr, trace);
  } catch (const std::exception& e) {
    spdlog::error("request failed with an exception ({}): {}", e.what(), DescribeRequest(request));
    reply = ServerError(std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("request failed with an unknown exception: {}", DescribeRequest(request));
    reply = ServerError("internal error");
  }
  if (trace) {
    traces_->Finish(trace);
    reply.tracing_id = trace->session_id();
  }
  return reply;
}

void QueryProcessor::ProcessAsync(ConnectionState& conn, const Request& request, RequestFlags flags,
                                  std::function<void(Reply)> done) {
  const Trace trace = BeginTrace(conn, request, flags.tracing);
  if (trace) {
    done = [traces = traces_, trace, done = std::move(done)](Reply reply) {
      traces->Finish(trace);
      reply.tracing_id = trace->session_id();
      done(std::move(reply));
    };
  }
  // The safety net as in Process. A write that took `done` set it to null:
  // it answers, whatever is thrown after.
  std::optional<Reply> reply;
  try {
    reply = ProcessRequest(conn, request, &done, trace);
  } catch (const std::exception& e) {
    spdlog::error("request failed with an exception ({}): {}", e.what(), DescribeRequest(request));
    reply = ServerError(std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("request failed with an unknown exception: {}", DescribeRequest(request));
    reply = ServerError("internal error");
  }
  if (reply && done) done(std::move(*reply));
}

QueryProcessor::Trace QueryProcessor::BeginTrace(const ConnectionState& conn, const Request& request, bool requested) {
  if (traces_ == nullptr || !traces_->ShouldTrace(requested)) return nullptr;
  // Cassandra's request names and parameters (system_traces.sessions).
  std::string kind;
  std::map<std::string, std::string> parameters;
  auto add_levels = [&](Consistency level, const std::optional<Consistency>& serial) {
    parameters["consistency_level"] = ConsistencyLevelName(static_cast<ConsistencyLevel>(level));
    if (serial) parameters["serial_consistency_level"] = ConsistencyLevelName(static_cast<ConsistencyLevel>(*serial));
  };
  if (const auto* q = std::get_if<QueryRequest>(&request)) {
    kind = "Execute CQL3 query";
    parameters["query"] = q->query;
    add_levels(q->params.consistency, q->params.serial_consistency);
    if (q->params.page_size) parameters["page_size"] = std::to_string(*q->params.page_size);
  } else if (const auto* e = std::get_if<ExecuteRequest>(&request)) {
    kind = "Execute CQL3 prepared query";
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = prepared_.find(e->id);
      if (it != prepared_.end()) parameters["query"] = it->second->query;
    }
    add_levels(e->params.consistency, e->params.serial_consistency);
    if (e->params.page_size) parameters["page_size"] = std::to_string(*e->params.page_size);
  } else if (const auto* b = std::get_if<BatchRequest>(&request)) {
    kind = "Execute batch of CQL3 queries";
    add_levels(b->consistency, b->serial_consistency);
  } else if (const auto* p = std::get_if<PrepareRequest>(&request)) {
    kind = "Preparing CQL3 query";
    parameters["query"] = p->query;
  } else {
    return nullptr;
  }
  return traces_->Begin(conn.client_address(), std::move(kind), std::move(parameters));
}

std::optional<Reply> QueryProcessor::ProcessRequest(ConnectionState& conn, const Request& request, ReplyDone* later,
                                                    const Trace& trace) {
  // The request's consistency level travels with its statement (Run, Batch)
  // to the replicas of every tablet it touches (tablets/request_consistency.h).
  // v5: a QUERY, PREPARE or BATCH naming a keyspace runs in it, not in the
  // connection's (§4.1.4); a USE among them still changes the connection's.
  std::optional<ConnectionState> scoped;
  auto in_keyspace = [&](const std::optional<std::string>& keyspace) -> ConnectionState& {
    if (!keyspace) return conn;
    return scoped.emplace(conn, *keyspace);
  };
  if (const auto* q = std::get_if<QueryRequest>(&request)) {
    std::optional<Reply> reply = Query(in_keyspace(q->params.keyspace), q->query, q->params, later, trace);
    if (scoped && scoped->keyspace() != *q->params.keyspace) conn.set_keyspace(scoped->keyspace());  // a USE
    return reply;
  }
  if (const auto* e = std::get_if<ExecuteRequest>(&request)) {
    return Execute(conn, e->id, e->result_metadata_id, e->params, later, trace);
  }
  if (const auto* b = std::get_if<BatchRequest>(&request)) return Batch(in_keyspace(b->keyspace), *b, later, trace);
  if (const auto* p = std::get_if<PrepareRequest>(&request)) return Prepare(in_keyspace(p->keyspace), p->query, trace);
  if (const auto* a = std::get_if<AuthResponseRequest>(&request)) return AuthResponse(conn, *a);
  return Error(Status::InvalidArgument("unexpected request"));
}

Reply QueryProcessor::Error(const Status& status, const RawStatement* statement) const {
  ErrorResponse e = ToErrorResponse(status);
  if (e.code == ErrorCode::kAlreadyExists && statement) {
    if (const auto* ks = std::get_if<CreateKeyspaceStatement>(statement)) e.keyspace = ks->name;
    if (const auto* t = std::get_if<CreateTableStatement>(statement)) {
      e.keyspace = t->table.keyspace;
      e.table = t->table.name;
    }
    if (const auto* t = std::get_if<CreateTypeStatement>(statement)) {  // as Cassandra: the type in the table field
      e.keyspace = t->name.keyspace;
      e.table = t->name.name;
    }
  }
  if (e.code == ErrorCode::kWriteTimeout && e.write_type == "CAS") return VersionedError(std::move(e));
  return Reply{Opcode::kError, EncodeError(e), {}};
}

std::optional<Reply> QueryProcessor::Query(ConnectionState& conn, const std::string& text,
                                           const QueryParameters& params, ReplyDone* later, const Trace& trace) {
  if (trace) trace->Event("Parsing " + text.substr(0, 1000));
  auto parsed = ParseStatement(text);
  if (!parsed.ok()) return Error(parsed.status());
  if (trace) trace->Event("Preparing statement");
  return Run(conn, *parsed, text, params, later, trace);
}

std::optional<Reply> QueryProcessor::Run(ConnectionState& conn, const ParsedStatement& parsed,
                                         const std::string& text, const QueryParameters& params, ReplyDone* later,
                                         const Trace& trace, int* runs) {
  auto ran = [runs](bool answers_later) {
    if (runs) *runs = answers_later ? kAnswersLater : kAnswersOnThread;
  };
  if (static_cast<int>(params.values.size()) < parsed.bind_marker_count) {
    return Error(Status::InvalidArgument("There were " + std::to_string(parsed.bind_marker_count) +
                                         " markers(?) in CQL but " + std::to_string(params.values.size()) +
                                         " bound variables"));
  }
  // Values sent by name (QUERY flag 0x40): put them in marker order.
  std::vector<WireValue> by_name;
  if (!params.value_names.empty()) {
    std::vector<ColumnSpec> markers;
    std::vector<uint16_t> unused;
    (void)DescribeBindMarkers(*db_, &system_tables_, parsed, conn.keyspace(), &markers, &unused);
    for (int i = 0; i < parsed.bind_marker_count; ++i) {
      std::string name = i < static_cast<int>(markers.size()) ? markers[static_cast<size_t>(i)].name : "";
      auto it = std::find(params.value_names.begin(), params.value_names.end(), name);
      if (it == params.value_names.end()) return Error(Status::InvalidArgument("No value has been provided for bind marker " + name));
      by_name.push_back(params.values[static_cast<size_t>(it - params.value_names.begin())]);
    }
  }
  BindContext bind;
  bind.values = params.value_names.empty() ? &params.values : &by_name;
  bind.now_micros = db_->NowMicros();  // now(), TTL expiry; write timestamps come from WriteContext
  bind.rng = &ThreadRandom();
  bind.next_value = NextValue(conn.keyspace());
  const RawStatement& s = parsed.statement;
  const std::string ks = conn.keyspace();
  if (IsAuthStatement(s)) {
    auto r = ExecuteAuthStatement(auth_, conn.user(), s, ks);
    if (!r.ok()) return Error(r.status());
    if (!*r) return ResultReply(EncodeVoidResult());
    return ResultReply(EncodeRows(**r, params.skip_metadata));
  }
  if (auth_) {
    Status allowed = CheckAccess(*auth_, db_->catalog(), conn.user(), s, ks);
    if (!allowed.ok()) return Error(allowed);
  }
  auto schema_result = [&](const ::tessera::Result<SchemaOutcome>& r) -> Reply {
    if (!r.ok()) return Error(r.status(), &s);
    if (r->change) UpdateGrants(conn.user(), s, ks);
    if (!r->change) return ResultReply(EncodeVoidResult());
    if (on_schema_change_) on_schema_change_(*r->change, /*originating=*/true);
    return Reply{Opcode::kResult, EncodeSchemaChangeResult(*r->change), DesignLintWarnings(s, ks)};
  };
  RequestConsistency consistency = ConsistencyOf(params.consistency);
  consistency.trace = trace;
  bool read_before_write = false;  // l[i] = v, DELETE l[i], l = l - [..] read on this thread
  auto apply = [&](const ::tessera::Result<std::vector<Mutation>>& m) -> std::optional<Reply> {
    if (!m.ok()) return Error(m.status());
    ran(!read_before_write && coordinator_->AppliesWithoutWaiting(*m, consistency));
    return ApplyWrites(*m, consistency, later);
  };
  WriteContext write{bind, ks, params.default_timestamp, consistency};
  write.read_before_write = &read_before_write;
  if (params.serial_consistency) write.serial = static_cast<ConsistencyLevel>(*params.serial_consistency);
  if (const auto* sel = std::get_if<SelectStatement>(&s)) {
    if (trace) {
      trace->Event("Executing query on " + (sel->table.keyspace.empty() ? ks : sel->table.keyspace) + "." +
                   sel->table.name + " at " + ConsistencyLevelName(consistency.level));
    }
    SelectContext ctx{bind, ks, params.page_size.value_or(0), params.paging_state, db_->guardrails(), consistency};
    ctx.functions = user_functions();
    // On a cluster, a row read need not hold this thread while replicas
    // answer. GROUP BY reads in chunks, each sized from the rows before it,
    // and a SERIAL read makes its Paxos prepare before it reads: both are
    // run again until they read nothing new (DeferredRead::replay).
    DeferredRead deferred;
    const bool serial = consistency.level == ConsistencyLevel::kSerial ||
                        consistency.level == ConsistencyLevel::kLocalSerial;
    if (cluster_ && later && *later) {
      ctx.deferred = &deferred;
      ctx.defer_read = sel->group_by.empty() && !serial;
      deferred.replay = !sel->group_by.empty() || serial;
    }
    auto rs = ExecuteSelect(*coordinator_, &system_tables_, *sel, ctx);
    if (deferred.table || rs.ok()) ran(deferred.table != nullptr);  // an error may come before any read
    if (deferred.table) return SelectAfterDeferredRead(*sel, ctx, std::move(deferred), params, later);
    if (deferred.static_skipped) {
      ctx.deferred = nullptr;
      ctx.defer_read = false;
      rs = ExecuteSelect(*coordinator_, &system_tables_, *sel, ctx);
    }
    return SelectReply(rs, params.consistency, params.skip_metadata);
  }
  if (ConditionalWrites::IsConditional(s)) {
    bool answers_later = false;
    std::optional<Reply> reply = Conditional({s}, {write}, /*batch=*/false, later, &answers_later);
    ran(answers_later && !read_before_write);
    return reply;
  }
  if (const auto* ins = std::get_if<InsertStatement>(&s)) return apply(BuildInsert(*db_, *ins, write));
  if (const auto* up = std::get_if<UpdateStatement>(&s)) return apply(BuildUpdate(*coordinator_, *up, write));
  if (const auto* del = std::get_if<DeleteStatement>(&s)) return apply(BuildDelete(*coordinator_, *del, write));
  if (const auto* b = std::get_if<BatchStatement>(&s)) {
    std::vector<Mutation> all;
    const bool conditional = std::any_of(b->statements.begin(), b->statements.end(), [](const auto& stmt) {
      return std::visit([](const auto& x) { return ConditionalWrites::IsConditional(RawStatement{x}); }, stmt);
    });
    if (conditional) {
      if (b->using_clause.timestamp) {
        return Error(Status::InvalidArgument("Cannot provide custom timestamp for conditional BATCH"));
      }
      std::vector<RawStatement> statements;
      for (const auto& stmt : b->statements) {
        statements.push_back(std::visit([&](const auto& x) -> RawStatement {
          auto copy = x;
          if (!copy.using_clause.timestamp) copy.using_clause.timestamp = b->using_clause.timestamp;
          return copy;
        }, stmt));
      }
      std::vector<WriteContext> contexts(statements.size(), write);
      return Conditional(std::move(statements), std::move(contexts), /*batch=*/true, later);
    }
    for (const auto& stmt : b->statements) {
      WriteContext w = write;
      ::tessera::Result<std::vector<Mutation>> m = std::visit(
          [&](const auto& x) -> ::tessera::Result<std::vector<Mutation>> {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, InsertStatement>) {
              InsertStatement copy = x;
              if (!copy.using_clause.timestamp) copy.using_clause.timestamp = b->using_clause.timestamp;
              return BuildInsert(*db_, copy, w);
            } else if constexpr (std::is_same_v<T, UpdateStatement>) {
              UpdateStatement copy = x;
              if (!copy.using_clause.timestamp) copy.using_clause.timestamp = b->using_clause.timestamp;
              return BuildUpdate(*coordinator_, copy, w);
            } else {
              DeleteStatement copy = x;
              if (!copy.using_clause.timestamp) copy.using_clause.timestamp = b->using_clause.timestamp;
              return BuildDelete(*coordinator_, copy, w);
            }
          },
          stmt);
      if (!m.ok()) return Error(m.status());
      all.insert(all.end(), m->begin(), m->end());
    }
    Status counters = CheckBatchCounters(b->type, all);
    if (!counters.ok()) return Error(counters);
    const RequestConsistency batch{consistency.level, BatchWriteType(b->type), nullptr, consistency.trace};
    ran(!read_before_write && coordinator_->AppliesWithoutWaiting(all, batch));
    return ApplyWrites(all, batch, later);
  }
  if (const auto* describe = std::get_if<DescribeStatement>(&s)) {
    auto rows = ExecuteDescribe(*db_, *describe, ks);
    if (!rows.ok()) return Error(rows.status());
    return ResultReply(EncodeRows(*rows, /*skip_metadata=*/false));  // prepared DESCRIBEs carry no result metadata
  }
  if (const auto* function = std::get_if<FunctionStatement>(&s); function && !functions_->enabled()) {
    // No user-defined function or aggregate exists: they are disabled, as
    // by default in Cassandra (enable_user_defined_functions: false).
    if (!function->drop) {
      return Error(Status::InvalidArgument(
          "User-defined functions are disabled in cassandra.yaml - set enable_user_defined_functions=true to enable"));
    }
    if (function->if_not_exists) return ResultReply(EncodeVoidResult());
    const std::string name = (function->name.keyspace.empty() ? ks : function->name.keyspace) + "." + function->name.name;
    return Error(Status::InvalidArgument((function->aggregate ? "Aggregate '" : "Function '") + name +
                                         "' doesn't exist"));
  }
  if (const auto* use = std::get_if<UseStatement>(&s)) {
    // The system keyspaces are usable as in Cassandra (a driver may open its
    // session on keyspace system), also those the catalog does not hold.
    if (!IsSystemKeyspace(use->keyspace) && !db_->catalog().GetKeyspace(use->keyspace).ok()) {
      return Error(Status::InvalidArgument("Keyspace '" + use->keyspace + "' does not exist"));
    }
    conn.set_keyspace(use->keyspace);
    return ResultReply(EncodeSetKeyspaceResult(use->keyspace));
  }
  const bool schema_statement = std::holds_alternative<CreateKeyspaceStatement>(s) ||
                                std::holds_alternative<AlterKeyspaceStatement>(s) ||
                                std::holds_alternative<CreateTableStatement>(s) ||
                                std::holds_alternative<AlterTableStatement>(s) ||
                                std::holds_alternative<CreateTypeStatement>(s) ||
                                std::holds_alternative<AlterTypeStatement>(s) ||
                                std::holds_alternative<CreateIndexStatement>(s) ||
                                std::holds_alternative<CreateViewStatement>(s) ||
                                std::holds_alternative<FunctionStatement>(s) ||
                                (std::holds_alternative<DropStatement>(s) &&
                                 std::get<DropStatement>(s).target != DropStatement::Target::kSequence);
  if (schema_statement && schema_coordinator_ != nullptr) {
    if (Status fits = CheckReplicationFits(s); !fits.ok()) return Error(fits, &s);
    auto outcome = schema_coordinator_->Run(ks, text, [&] { return *ExecuteSchema(s, ks); });
    // ALTER KEYSPACE ... WITH replication answers once the tablets have the
    // new factors (replication_changer.h).
    const auto* alter = std::get_if<AlterKeyspaceStatement>(&s);
    if (outcome.ok() && outcome->change && alter && replication_changer_ != nullptr &&
        std::any_of(alter->properties.begin(), alter->properties.end(),
                    [](const Property& p) { return p.name == "replication"; })) {
      if (Status st = replication_changer_->ApplyReplication(alter->name); !st.ok()) return Error(st, &s);
    }
    return schema_result(std::move(outcome));
  }
  if (auto r = ExecuteSchema(s, ks)) return schema_result(*r);
  if (const auto* x = std::get_if<CreateSequenceStatement>(&s)) {
    Status st = ExecuteCreateSequence(*db_, *x, ks);
    return st.ok() ? ResultReply(EncodeVoidResult()) : Error(st);
  }
  if (const auto* x = std::get_if<TruncateStatement>(&s)) {
    // As Cassandra: a truncation reaches every replica or fails (TruncateTable at ALL).
    Status st = ExecuteTruncate(*coordinator_, *x, ks);
    return st.ok() ? ResultReply(EncodeVoidResult()) : Error(st);
  }
  return Error(Status::InvalidArgument("unsupported statement"));
}

std::function<::tessera::Result<int64_t>(const std::string&)> QueryProcessor::NextValue(const std::string& keyspace) {
  return [this, keyspace](const std::string& sequence) -> ::tessera::Result<int64_t> {
    const size_t dot = sequence.find('.');
    const std::string ks = dot == std::string::npos ? keyspace : sequence.substr(0, dot);
    const std::string name = dot == std::string::npos ? sequence : sequence.substr(dot + 1);
    if (ks.empty()) return Status::InvalidArgument("No keyspace has been specified for sequence " + name);
    auto v = db_->sequences().Next(ks, name);
    if (!v.ok() && v.status().IsNotFound()) return Status::InvalidArgument(v.status().message());
    return v;
  };
}

std::optional<Reply> QueryProcessor::Conditional(std::vector<RawStatement> statements,
                                                 std::vector<WriteContext> contexts, bool batch, ReplyDone* later,
                                                 bool* answers_later) {
  // The guardrails' and the writes' warnings, from whichever thread answers.
  struct Warnings {
    std::mutex mu;
    std::vector<std::string> list;
    void Add(std::vector<std::string> more) {
      std::lock_guard<std::mutex> lock(mu);
      list.insert(list.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
  };
  auto warnings = std::make_shared<Warnings>();
  ConditionalWrites::ApplyFn apply = [this, warnings](std::vector<Mutation> mutations, const RequestConsistency& through,
                                                      std::function<void(Status)> done) {
    std::vector<std::string> found;
    Status allowed = CheckWriteGuardrails(mutations, db_->guardrails(), &found);
    warnings->Add(std::move(found));
    if (!allowed.ok()) return done(allowed);
    coordinator_->ApplyBatchAsync(mutations, through,
                                  [warnings, done = std::move(done)](Status s, std::vector<std::string> more) {
                                    warnings->Add(std::move(more));
                                    done(std::move(s));
                                  });
  };
  auto reply_of = [this, warnings](const ::tessera::Result<ResultSet>& rs) -> Reply {
    if (!rs.ok()) return Error(rs.status());
    std::lock_guard<std::mutex> lock(warnings->mu);
    return Reply{Opcode::kResult, EncodeRows(*rs, false), std::move(warnings->list)};
  };
  const bool async = cluster_ && later && *later;
  if (answers_later) *answers_later = async;
  if (!async) return reply_of(conditional_writes_.Run(std::move(statements), std::move(contexts), batch, apply));
  // The reply is called once the processor's node has drained its replicas'
  // answers at the latest, while this processor still exists (Node::Stop).
  auto reply = std::make_shared<ReplyDone>(std::exchange(*later, nullptr));
  auto answered = std::make_shared<std::atomic<bool>>(false);
  try {
    conditional_writes_.RunAsync(std::move(statements), std::move(contexts), batch, std::move(apply),
                                 [reply, answered, reply_of](::tessera::Result<ResultSet> rs) {
                                   answered->store(true, std::memory_order_release);
                                   (*reply)(reply_of(rs));
                                 });
  } catch (...) {
    // Thrown before any answer (building the writes): the request's own
    // safety net answers it, through `later` again.
    if (!answered->load(std::memory_order_acquire)) *later = std::move(*reply);
    throw;
  }
  return std::nullopt;
}

std::optional<Reply> QueryProcessor::Batch(ConnectionState& conn, const BatchRequest& batch, ReplyDone* later,
                                           const Trace& trace) {
  // Statements with conditions make the whole batch conditional (conditional_writes.h).
  std::vector<RawStatement> statements;
  std::vector<WriteContext> contexts;
  bool conditional = false;
  const BatchStatement::Type type = batch.type == BatchRequest::kCounter    ? BatchStatement::Type::kCounter
                                    : batch.type == BatchRequest::kUnlogged ? BatchStatement::Type::kUnlogged
                                                                            : BatchStatement::Type::kLogged;
  RequestConsistency consistency = ConsistencyOf(batch.consistency, BatchWriteType(type));
  consistency.trace = trace;
  for (const auto& entry : batch.statements) {
    ParsedStatement parsed;
    std::string keyspace = conn.keyspace();
    if (entry.prepared) {
      auto p = FindPrepared(entry.query_or_id, conn.keyspace());
      if (!p) {
        ErrorResponse e{ErrorCode::kUnprepared, "Prepared query not found"};
        e.unprepared_id = entry.query_or_id;
        return Reply{Opcode::kError, EncodeError(e), {}};
      }
      parsed = p->parsed;
      if (!p->keyspace.empty()) keyspace = p->keyspace;
    } else {
      auto p = ParseStatement(entry.query_or_id);
      if (!p.ok()) return Error(p.status());
      parsed = std::move(p).value();
    }
    if (auth_) {
      Status allowed = CheckAccess(*auth_, db_->catalog(), conn.user(), parsed.statement, keyspace);
      if (!allowed.ok()) return Error(allowed);
    }
    BindContext bind;
    bind.values = &entry.values;
    bind.now_micros = db_->NowMicros();
    bind.rng = &ThreadRandom();
    bind.next_value = NextValue(keyspace);
    const bool dml = std::holds_alternative<InsertStatement>(parsed.statement) ||
                     std::holds_alternative<UpdateStatement>(parsed.statement) ||
                     std::holds_alternative<DeleteStatement>(parsed.statement);
    if (!dml) return Error(Status::InvalidArgument("Invalid statement in batch: only INSERT, UPDATE and DELETE are allowed"));
    conditional = conditional || ConditionalWrites::IsConditional(parsed.statement);
    statements.push_back(std::move(parsed.statement));
    contexts.push_back(WriteContext{bind, keyspace, batch.default_timestamp, consistency});
    if (batch.serial_consistency) contexts.back().serial = static_cast<ConsistencyLevel>(*batch.serial_consistency);
  }
  if (conditional) return Conditional(std::move(statements), std::move(contexts), /*batch=*/true, later);
  std::vector<Mutation> all;
  for (size_t i = 0; i < statements.size(); ++i) {
    ::tessera::Result<std::vector<Mutation>> m = std::vector<Mutation>{};
    if (const auto* x = std::get_if<InsertStatement>(&statements[i])) m = BuildInsert(*db_, *x, contexts[i]);
    else if (const auto* x = std::get_if<UpdateStatement>(&statements[i])) m = BuildUpdate(*coordinator_, *x, contexts[i]);
    else if (const auto* x = std::get_if<DeleteStatement>(&statements[i])) m = BuildDelete(*coordinator_, *x, contexts[i]);
    if (!m.ok()) return Error(m.status());
    all.insert(all.end(), m->begin(), m->end());
  }
  Status counters = CheckBatchCounters(type, all);
  if (!counters.ok()) return Error(counters);
  return ApplyWrites(all, consistency, later);
}

Reply QueryProcessor::SelectReply(const ::tessera::Result<ResultSet>& rs, Consistency consistency,
                                  bool skip_metadata) const {
  if (!rs.ok()) {
    if (rs.status().message().rfind(kTombstoneOverwhelming, 0) == 0) {
      ErrorResponse e{ErrorCode::kReadFailure, rs.status().message()};
      e.consistency = consistency;
      e.alive_or_blockfor = 1;
      e.failures = 1;
      e.reasons.push_back({local_address_bytes_, kReasonReadTooManyTombstones});
      return VersionedError(std::move(e));
    }
    return Error(rs.status());
  }
  for (const auto& w : rs->warnings) spdlog::warn("{}", w);
  return Reply{Opcode::kResult, EncodeRows(*rs, skip_metadata), rs->warnings};
}

std::optional<Reply> QueryProcessor::ApplyWrites(const std::vector<Mutation>& mutations,
                                                 const RequestConsistency& given, ReplyDone* later) {
  // Counter writes are counter mutations whatever the statement (Cassandra's
  // CounterMutation): ANY is refused, and a time-out names write type COUNTER.
  RequestConsistency consistency = given;
  auto counter = std::find_if(mutations.begin(), mutations.end(), [](const Mutation& m) { return m.table->HasCounters(); });
  if (counter != mutations.end()) {
    if (consistency.level == ConsistencyLevel::kAny) {
      return Error(Status::InvalidArgument("Consistency level ANY is not yet supported for counter table " +
                                           counter->table->name));
    }
    if (consistency.write_type == WriteType::kSimple) consistency.write_type = WriteType::kCounter;
  }
  std::vector<std::string> warnings;
  Status checked = CheckWriteGuardrails(mutations, db_->guardrails(), &warnings);
  if (!checked.ok()) return Error(checked);
  if (consistency.trace) {
    consistency.trace->Event("Applying " + std::to_string(mutations.size()) +
                             (mutations.size() == 1 ? " mutation at " : " mutations at ") +
                             ConsistencyLevelName(consistency.level));
  }
  if (later) {
    // The reply is built from values alone: it may come after this
    // processor is gone (a node stopping drains its replicas' answers).
    coordinator_->ApplyBatchAsync(mutations, consistency,
                         [reply = std::exchange(*later, nullptr), warnings = std::move(warnings)](
                             Status st, std::vector<std::string> more) mutable {
                           if (!st.ok()) return reply(Reply{Opcode::kError, EncodeError(ToErrorResponse(st)), {}});
                           warnings.insert(warnings.end(), more.begin(), more.end());
                           for (const auto& w : warnings) spdlog::warn("{}", w);
                           reply(Reply{Opcode::kResult, EncodeVoidResult(), std::move(warnings)});
                         });
    return std::nullopt;
  }
  Status st = coordinator_->ApplyBatch(mutations, &warnings, consistency);
  if (!st.ok()) return Error(st);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  return Reply{Opcode::kResult, EncodeVoidResult(), std::move(warnings)};
}

}  // namespace tessera::cql
