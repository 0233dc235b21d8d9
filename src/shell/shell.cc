#include "shell/shell.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "common/bytes.h"
#include "shell/result_printer.h"
#include "types/schema.h"
#include "shell/statement_splitter.h"
#include "types/serialization.h"
#include "types/value_format.h"

namespace tessera::shell {
namespace {

constexpr int kMaxSourceDepth = 8;

std::vector<std::string> Words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// An identifier as typed: "Quoted" keeps case, anything else folds to lower case.
std::string Identifier(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string QuoteIfNeeded(const std::string& name) { return QuoteIdentifier(name); }


std::string Text(const std::optional<std::string>& cell) { return cell ? *cell : std::string(); }

const char* kHelp =
    "CQL statements end with ';' and may span lines. Shell commands:\n"
    "  DESCRIBE KEYSPACES | KEYSPACE <ks> | TABLES | TABLE <[ks.]table>\n"
    "  SOURCE '<file>'        run the statements in a file\n"
    "  CONSISTENCY [<level>]  show or set the consistency level\n"
    "  PAGING [ON | OFF | <rows>]\n"
    "  EXPAND [ON | OFF]      one block per row\n"
    "  TRACING [ON | OFF]     print each statement's steps after its result\n"
    "  EXIT | QUIT\n";

}  // namespace

Shell::Shell(std::unique_ptr<client::CqlConnection> connection, std::ostream& out, std::ostream& err,
             std::function<bool()> more)
    : conn_(std::move(connection)), out_(out), err_(err), more_(std::move(more)) {}

std::string Shell::Prompt(bool continuation) const {
  if (continuation) return "   ... ";
  return keyspace_.empty() ? "tessera> " : "tessera:" + keyspace_ + "> ";
}

bool Shell::RunStream(std::istream& in) {
  StatementSplitter splitter;
  bool ok = true;
  for (std::string line; !exit_ && std::getline(in, line);) {
    for (const auto& statement : splitter.Feed(line)) {
      ok = Execute(statement) && ok;
      if (exit_) break;
    }
  }
  if (splitter.pending() && !exit_) {
    err_ << "Incomplete statement at end of input: " << splitter.TakePending() << "\n";
    ok = false;
  }
  return ok;
}

bool Shell::Execute(const std::string& statement) {
  const std::string word = FirstWord(statement);
  if (word == "EXIT" || word == "QUIT") {
    exit_ = true;
    return true;
  }
  if (word == "HELP") {
    out_ << kHelp;
    return true;
  }
  if (word == "DESCRIBE" || word == "DESC") return Describe(statement);
  if (word == "SOURCE") return Source(statement);
  if (word == "CONSISTENCY") return Consistency(statement);
  if (word == "PAGING") return Paging(statement);
  if (word == "TRACING") return Tracing(Words(statement));
  if (word == "EXPAND") {
    auto w = Words(statement);
    if (w.size() > 1) expand_ = Upper(w[1]) == "ON";
    out_ << "Expanded output is currently " << (expand_ ? "enabled" : "disabled") << ".\n";
    return true;
  }
  if (word == "CLEAR" || word == "CLS") {
    out_ << "\x1b[H\x1b[2J";
    return true;
  }
  return Cql(statement);
}

void Shell::PrintError(const client::CqlConnection::Response* r, const Status& status) {
  if (!r) {
    err_ << "Connection error: " << status.ToString() << "\n";
    return;
  }
  const auto& d = r->decoded;
  char code[8];
  std::snprintf(code, sizeof code, "%04X", static_cast<unsigned>(d.error_code));
  switch (d.error_code) {
    case 0x2000: err_ << "SyntaxException: " << d.error_message << "\n"; return;
    case 0x2200:
      err_ << "InvalidRequest: Error from server: code=2200 [Invalid query] message=\"" << d.error_message << "\"\n";
      return;
    case 0x2400: err_ << "AlreadyExists: " << d.error_message << "\n"; return;
    default: err_ << "Error from server: code=" << code << " message=\"" << d.error_message << "\"\n"; return;
  }
}

bool Shell::Cql(const std::string& statement) {
  std::optional<std::string> paging_state;
  size_t shown = 0;
  std::vector<cql::ColumnSpec> columns;
  std::string trace_id;
  for (;;) {
    cql::QueryParameters p;
    p.consistency = consistency_;
    if (page_size_ > 0) p.page_size = page_size_;
    p.paging_state = paging_state;
    auto sent = conn_->Send(cql::QueryRequest{statement, p}, tracing_ ? cql::kFlagTracing : 0);
    if (!sent.ok()) {
      PrintError(nullptr, sent.status());
      return false;
    }
    auto r = conn_->Receive();
    while (r.ok() && r->stream != *sent) r = conn_->Receive();  // skip events
    if (!r.ok()) {
      PrintError(nullptr, r.status());
      return false;
    }
    const auto& d = r->decoded;
    for (const auto& w : d.warnings) err_ << "Warnings :\n" << w << "\n\n";
    if (d.is_error()) {
      PrintError(&*r, Status::OK());
      return false;
    }
    if (d.result_kind == cql::kResultSetKeyspace) keyspace_ = d.keyspace;
    if (d.result_kind != cql::kResultRows) return d.tracing_id.empty() || PrintTrace(d.tracing_id);
    if (!d.tracing_id.empty()) trace_id = d.tracing_id;  // the last page's
    if (!d.rows.columns.empty()) columns = d.rows.columns;
    PrintRows(columns, d.rows, expand_, shown, out_);
    shown += d.rows.rows.size();
    paging_state = d.rows.paging_state;
    if (!paging_state) break;
    if (more_) {
      out_ << "\n---MORE---" << std::flush;
      if (!more_()) break;
    }
  }
  out_ << "\n(" << shown << " rows)\n";
  return trace_id.empty() || PrintTrace(trace_id);
}

std::optional<cql::DecodedRows> Shell::Rows(const std::string& cql, const std::vector<std::string>& values) {
  cql::QueryParameters p;
  for (const auto& v : values) p.values.push_back(cql::WireValue::Of(v));
  auto sent = conn_->Send(cql::QueryRequest{cql, p});
  if (!sent.ok()) {
    PrintError(nullptr, sent.status());
    return std::nullopt;
  }
  auto r = conn_->Receive();
  while (r.ok() && r->stream != *sent) r = conn_->Receive();
  if (!r.ok()) {
    PrintError(nullptr, r.status());
    return std::nullopt;
  }
  if (r->decoded.is_error()) {
    PrintError(&*r, Status::OK());
    return std::nullopt;
  }
  return std::move(r->decoded.rows);
}

bool Shell::Describe(const std::string& statement) {
  auto w = Words(statement);
  const std::string what = w.size() > 1 ? Upper(w[1]) : "";
  if (what == "KEYSPACES") {
    auto rows = Rows("SELECT keyspace_name FROM system_schema.keyspaces", {});
    if (!rows) return false;
    out_ << "\n";
    for (const auto& r : rows->rows) out_ << QuoteIfNeeded(Text(r[0])) << "  ";
    out_ << "\n\n";
    return true;
  }
  if (what == "TABLES") {
    auto rows = Rows("SELECT keyspace_name, table_name FROM system_schema.tables", {});
    if (!rows) return false;
    std::map<std::string, std::vector<std::string>> by_keyspace;
    for (const auto& r : rows->rows) by_keyspace[Text(r[0])].push_back(Text(r[1]));
    for (const auto& [ks, tables] : by_keyspace) {
      if (!keyspace_.empty() && ks != keyspace_) continue;
      out_ << "\nKeyspace " << ks << "\n" << std::string(9 + ks.size(), '-') << "\n";
      for (const auto& t : tables) out_ << QuoteIfNeeded(t) << "  ";
      out_ << "\n";
    }
    out_ << "\n";
    return true;
  }
  if (what == "KEYSPACE") {
    std::string ks = w.size() > 2 ? Identifier(w[2]) : keyspace_;
    if (ks.empty()) {
      err_ << "DESCRIBE KEYSPACE needs a keyspace name (no keyspace in use)\n";
      return false;
    }
    return DescribeKeyspace(ks);
  }
  std::string name = what == "TABLE" || what == "COLUMNFAMILY" ? (w.size() > 2 ? w[2] : "") : (w.size() > 1 ? w[1] : "");
  if (name.empty()) {
    err_ << "Usage: DESCRIBE KEYSPACES | KEYSPACE <ks> | TABLES | TABLE <[ks.]table>\n";
    return false;
  }
  std::string ks = keyspace_;
  if (auto dot = name.find('.'); dot != std::string::npos) {
    ks = Identifier(name.substr(0, dot));
    name = name.substr(dot + 1);
  }
  if (ks.empty()) {
    err_ << "No keyspace specified and no current keyspace: use [keyspace.]table\n";
    return false;
  }
  return DescribeTable(ks, Identifier(name));
}

bool Shell::DescribeKeyspace(const std::string& ks) {
  auto rows = Rows("SELECT replication, durable_writes FROM system_schema.keyspaces WHERE keyspace_name = ?", {ks});
  if (!rows) return false;
  if (rows->rows.empty()) {
    err_ << "Keyspace '" << ks << "' not found\n";
    return false;
  }
  const auto& r = rows->rows[0];
  out_ << "\nCREATE KEYSPACE " << QuoteIfNeeded(ks) << " WITH replication = "
       << (r[0] ? FormatValue(rows->columns[0].type, *r[0]) : "{}") << " AND durable_writes = "
       << (r[1] ? (FormatValue(rows->columns[1].type, *r[1]) == "True" ? "true" : "false") : "true") << ";\n";
  auto tables = Rows("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?", {ks});
  if (!tables) return false;
  for (const auto& t : tables->rows) {
    if (!DescribeTable(ks, Text(t[0]))) return false;
  }
  out_ << "\n";
  return true;
}

bool Shell::DescribeTable(const std::string& ks, const std::string& table) {
  auto cols = Rows("SELECT column_name, kind, position, type, clustering_order FROM system_schema.columns "
                   "WHERE keyspace_name = ? AND table_name = ?",
                   {ks, table});
  if (!cols) return false;
  if (cols->rows.empty()) {
    err_ << "Table '" << ks << "." << table << "' not found\n";
    return false;
  }
  struct Col {
    std::string name, kind, type, order;
    int position = 0;
  };
  std::vector<Col> all;
  for (const auto& r : cols->rows) {
    Col c{Text(r[0]), Text(r[1]), Text(r[3]), Text(r[4]), 0};
    if (r[2] && r[2]->size() == 4) c.position = static_cast<int32_t>(GetBigEndian32(r[2]->data()));
    all.push_back(std::move(c));
  }
  auto of_kind = [&](const std::string& kind) {
    std::vector<Col> out;
    for (const auto& c : all) {
      if (c.kind == kind) out.push_back(c);
    }
    std::sort(out.begin(), out.end(), [](const Col& a, const Col& b) { return a.position < b.position; });
    return out;
  };
  const auto pk = of_kind("partition_key"), ck = of_kind("clustering");
  out_ << "\nCREATE TABLE " << QuoteIfNeeded(ks) << "." << QuoteIfNeeded(table) << " (\n";
  for (const auto& kind : {"partition_key", "clustering", "static", "regular"}) {
    for (const auto& c : of_kind(kind)) {
      out_ << "    " << QuoteIfNeeded(c.name) << " " << c.type << (c.kind == "static" ? " static" : "") << ",\n";
    }
  }
  out_ << "    PRIMARY KEY (";
  std::string partition;
  for (const auto& c : pk) partition += (partition.empty() ? "" : ", ") + QuoteIfNeeded(c.name);
  out_ << (pk.size() > 1 ? "(" + partition + ")" : partition);
  for (const auto& c : ck) out_ << ", " << QuoteIfNeeded(c.name);
  out_ << ")\n)";
  std::vector<std::string> with;
  if (!ck.empty()) {
    std::string order;
    for (const auto& c : ck) order += (order.empty() ? "" : ", ") + QuoteIfNeeded(c.name) + " " + Upper(c.order);
    with.push_back("CLUSTERING ORDER BY (" + order + ")");
  }
  auto options = Rows("SELECT comment, default_time_to_live, gc_grace_seconds, extensions FROM system_schema.tables "
                      "WHERE keyspace_name = ? AND table_name = ?",
                      {ks, table});
  if (!options) return false;
  if (!options->rows.empty()) {
    const auto& r = options->rows[0];
    const auto& c = options->columns;
    if (r[3]) {
      // Tessera's own options travel in `extensions` (text values as blobs).
      auto ext = Deserialize(c[3].type, *r[3]);
      if (ext.ok()) {
        std::string distribution = "hash", initial, buckets, partition_buckets;
        for (const auto& [k, v] : ext->as_entries()) {
          if (k.as_bytes() == "tessera.distribution") distribution = v.as_bytes();
          if (k.as_bytes() == "tessera.initial_tablets") initial = v.as_bytes();
          if (k.as_bytes() == "tessera.buckets") buckets = v.as_bytes();
          if (k.as_bytes() == "tessera.partition_buckets") partition_buckets = v.as_bytes();
        }
        auto count = [](const std::string& v) { return v == "auto" ? std::string("'auto'") : v; };
        with.push_back("distribution = '" + distribution + "'");
        if (distribution == "hash" && !initial.empty()) with.push_back("initial_tablets = " + initial);
        if (!buckets.empty()) with.push_back("buckets = " + count(buckets));
        if (!partition_buckets.empty()) with.push_back("partition_buckets = " + count(partition_buckets));
      }
    }
    with.push_back("comment = '" + Text(r[0]) + "'");
    if (r[1]) with.push_back("default_time_to_live = " + FormatValue(c[1].type, *r[1]));
    if (r[2]) with.push_back("gc_grace_seconds = " + FormatValue(c[2].type, *r[2]));
  }
  for (size_t i = 0; i < with.size(); ++i) out_ << (i ? "\n    AND " : " WITH ") << with[i];
  out_ << ";\n";
  return true;
}

bool Shell::Source(const std::string& statement) {
  auto q1 = statement.find('\'');
  auto q2 = statement.rfind('\'');
  if (q1 == std::string::npos || q2 == q1) {
    err_ << "Usage: SOURCE '<file>'\n";
    return false;
  }
  const std::string path = statement.substr(q1 + 1, q2 - q1 - 1);
  std::ifstream in(path);
  if (!in) {
    err_ << "Could not open '" << path << "'\n";
    return false;
  }
  if (source_depth_ >= kMaxSourceDepth) {
    err_ << "SOURCE nested more than " << kMaxSourceDepth << " deep\n";
    return false;
  }
  ++source_depth_;
  auto more = std::move(more_);  // a sourced file prints every page
  const bool ok = RunStream(in);
  more_ = std::move(more);
  --source_depth_;
  return ok;
}

bool Shell::Consistency(const std::string& statement) {
  auto w = Words(statement);
  if (w.size() < 2) {
    out_ << "Current consistency level is " << cql::ConsistencyName(consistency_) << ".\n";
    return true;
  }
  auto level = cql::ConsistencyFromName(w[1]);
  if (!level) {
    err_ << "Improper CONSISTENCY command: unknown level " << w[1] << "\n";
    return false;
  }
  consistency_ = *level;
  out_ << "Consistency level set to " << cql::ConsistencyName(consistency_) << ".\n";
  return true;
}

bool Shell::Paging(const std::string& statement) {
  auto w = Words(statement);
  if (w.size() > 1) {
    const std::string v = Upper(w[1]);
    if (v == "OFF") {
      page_size_ = 0;
    } else if (v == "ON") {
      page_size_ = 100;
    } else if (std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      page_size_ = std::max(1, std::stoi(v));
    } else {
      err_ << "Improper PAGING command: " << w[1] << "\n";
      return false;
    }
  }
  if (page_size_ > 0) {
    out_ << "Query paging is currently enabled. Page size: " << page_size_ << "\n";
  } else {
    out_ << "Query paging is currently disabled.\n";
  }
  return true;
}

}  // namespace tessera::shell
