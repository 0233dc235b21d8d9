// Shell: the statement engine behind `tessera shell`, in the manner of
// cqlsh. It runs CQL statements over one client connection and the shell
// commands itself:
//   DESCRIBE KEYSPACES | KEYSPACE ks | TABLES | TABLE [ks.]t | [ks.]t
//   SOURCE 'file'       statements from a file, stopping at nothing
//   CONSISTENCY [level] show or set the consistency level
//   PAGING [ON|OFF|n]   page size of SELECTs (default 100 rows)
//   EXPAND [ON|OFF]     one block per row
//   TRACING [ON|OFF]    trace every statement and print its steps after its
//                       result (system_traces), as cqlsh does
//   HELP, EXIT, QUIT
// Results print as aligned tables (result_printer.h) with a "(n rows)"
// footer; with paging on and an interactive `more` callback, the shell asks
// "---MORE---" between pages. Errors print in cqlsh's words with the server's
// position, e.g. "SyntaxException: line 1:1 no viable alternative at input
// 'SELEC'" or "InvalidRequest: Error from server: code=2200 [Invalid query]
// message=...".
//
// Line editing and history are the caller's (tools/shell_command.cc, libedit).
// Thread safety: one thread.
#pragma once

#include <functional>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "client/cql_connection.h"
#include "cql/protocol/requests.h"

namespace tessera::shell {

class Shell {
 public:
  // `more`: asked between pages of a result; return false to stop. Empty:
  // all pages print without asking (scripts, -e, SOURCE).
  Shell(std::unique_ptr<client::CqlConnection> connection, std::ostream& out, std::ostream& err,
        std::function<bool()> more = {});

  // Runs one complete statement (without its ';'). Returns false on an error.
  bool Execute(const std::string& statement);
  // Runs every statement of `in` (lines, as typed). Returns false if any failed.
  bool RunStream(std::istream& in);
  bool exit_requested() const { return exit_; }
  // "tessera> " or "tessera:ks> "; `continuation`: "   ... ".
  std::string Prompt(bool continuation) const;

 private:
  bool Cql(const std::string& statement);
  bool Describe(const std::string& statement);
  bool DescribeTable(const std::string& keyspace, const std::string& table);
  bool DescribeKeyspace(const std::string& keyspace);
  bool Source(const std::string& statement);
  bool Consistency(const std::string& statement);
  bool Paging(const std::string& statement);
  // TRACING [ON | OFF] (shell_tracing.cc).
  bool Tracing(const std::vector<std::string>& words);
  // The steps of the traced request `session_id` (16 bytes); false after printing why not.
  bool PrintTrace(const std::string& session_id);
  void PrintError(const client::CqlConnection::Response* response, const Status& status);
  // Rows of a query with positional text values, or nullopt after printing the error.
  std::optional<cql::DecodedRows> Rows(const std::string& cql, const std::vector<std::string>& values);

  std::unique_ptr<client::CqlConnection> conn_;
  std::ostream& out_;
  std::ostream& err_;
  std::function<bool()> more_;
  std::string keyspace_;
  cql::Consistency consistency_ = cql::Consistency::kOne;
  int page_size_ = 100;  // <= 0: no paging
  bool expand_ = false;
  bool tracing_ = false;
  bool exit_ = false;
  int source_depth_ = 0;
};

}  // namespace tessera::shell
