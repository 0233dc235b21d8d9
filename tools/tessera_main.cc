// The `tessera` command line: subcommands for the server and, later, the
// demo, shell, loader and benchmark tools.
#include <CLI/CLI.hpp>

#include "tools/server_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a wide-column database that keeps data and load evenly spread"};
  app.require_subcommand(1);

  tessera::ServerConfig server;
  auto* cmd = app.add_subcommand("server", "run a single-node server on an embedded data directory");
  cmd->add_option("--data-dir", server.data_dir, "data directory (created if missing)")->capture_default_str();
  cmd->add_option("--listen", server.listen, "address:port of the CQL listener (loopback by default)")
      ->capture_default_str();
  cmd->add_flag("--exit-after-start", server.exit_after_start, "open the database, report and exit");
  // A config file sets the same options (TOML or INI, a [server] section with the long flag names:
  // data-dir = "...", listen = "..."); flags given on the command line win.
  app.set_config("--config", "", "read options from a TOML/INI file ([server] section, long flag names)");
  cmd->fallthrough();  // `tessera server --config FILE` as well as `tessera --config FILE server`

  CLI11_PARSE(app, argc, argv);
  if (cmd->parsed()) return tessera::RunServer(server);
  return 0;
}
