// `tessera shell`: an interactive CQL shell in the manner of cqlsh, on
// shell/shell.h. Line editing and history (~/.tessera_history) come from
// libedit (Debian libedit-dev); multi-line statements continue with "   ... ".
// Non-interactive forms: -e 'statement' (one statement, exit code 1 on
// error), -f file, or statements piped on stdin.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

CLI::App* AddShellCommand(CLI::App& app, int* exit_code);

}  // namespace tessera
