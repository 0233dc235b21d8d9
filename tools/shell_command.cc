#include "tools/shell_command.h"

#include "tools/client_flags.h"

#include <editline/readline.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <memory>
#include <string>

#include "shell/shell.h"
#include "shell/statement_splitter.h"

namespace tessera {
namespace {

struct ShellFlags {
  std::string host = "127.0.0.1";
  int port = 9042;
  std::string execute;
  std::string file;
  std::string keyspace;
  ClientFlags client;
};

std::string HistoryPath() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.tessera_history" : std::string();
}

// One line from the terminal; false at end of input (Ctrl-D).
bool ReadLine(const std::string& prompt, std::string* line) {
  char* text = readline(prompt.c_str());
  if (!text) return false;
  *line = text;
  std::free(text);
  return true;
}

int Interactive(shell::Shell& sh, const ShellFlags& f) {
  const std::string history = HistoryPath();
  using_history();
  if (!history.empty()) read_history(history.c_str());
  std::printf("Connected to Tessera at %s:%d.\n[tessera shell | CQL spec 3.4.5 | Native protocol v4]\n"
              "Use HELP for help.\n",
              f.host.c_str(), f.port);
  shell::StatementSplitter splitter;
  std::string line;
  while (!sh.exit_requested() && ReadLine(sh.Prompt(splitter.pending()), &line)) {
    if (!line.empty()) add_history(line.c_str());
    for (const auto& statement : splitter.Feed(line)) {
      sh.Execute(statement);
      std::cout.flush();
      if (sh.exit_requested()) break;
    }
  }
  if (!history.empty()) write_history(history.c_str());
  std::printf("\n");
  return 0;
}

int Run(const ShellFlags& f) {
  client::ClientOptions o;
  o.host = f.host;
  o.port = static_cast<uint16_t>(f.port);
  ApplyClientFlags(f.client, &o);
  auto conn = client::CqlConnection::Connect(o);
  if (!conn.ok()) {
    std::fprintf(stderr, "Connection error: could not connect to %s:%d: %s\n", f.host.c_str(), f.port,
                 conn.status().ToString().c_str());
    return 2;
  }
  const bool interactive = f.execute.empty() && f.file.empty() && isatty(STDIN_FILENO);
  std::function<bool()> more;
  if (interactive) {
    more = [] {
      std::string answer;
      if (!ReadLine("", &answer)) return false;
      return answer.empty() || (answer[0] != 'q' && answer[0] != 'Q');
    };
  }
  shell::Shell sh(std::move(*conn), std::cout, std::cerr, more);
  if (!f.keyspace.empty() && !sh.Execute("USE " + f.keyspace)) return 2;
  if (!f.execute.empty()) {
    std::istringstream in(f.execute + (f.execute.find(';') == std::string::npos ? ";" : ""));
    return sh.RunStream(in) ? 0 : 1;
  }
  if (!f.file.empty()) {
    std::ifstream in(f.file);
    if (!in) {
      std::fprintf(stderr, "Could not open '%s'\n", f.file.c_str());
      return 2;
    }
    return sh.RunStream(in) ? 0 : 1;
  }
  if (!interactive) return sh.RunStream(std::cin) ? 0 : 1;
  return Interactive(sh, f);
}

}  // namespace

CLI::App* AddShellCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ShellFlags>();
  auto* cmd = app.add_subcommand("shell", "an interactive CQL shell (cqlsh-like)");
  cmd->add_option("host", flags->host, "server address")->capture_default_str();
  cmd->add_option("port", flags->port, "server CQL port")->capture_default_str();
  cmd->add_option("-e,--execute", flags->execute, "run one statement and exit");
  cmd->add_option("-f,--file", flags->file, "run the statements in a file and exit");
  cmd->add_option("-k,--keyspace", flags->keyspace, "USE this keyspace first");
  AddClientFlags(cmd, &flags->client);
  cmd->callback([flags, exit_code] { *exit_code = Run(*flags); });
  return cmd;
}

}  // namespace tessera
