// `tessera load`: the command line of the bulk loader (loader/bulk_loader.h).
// Progress: a bar with rows/s and ETA, redrawn in place on a terminal; one
// plain line every five seconds otherwise. A summary at the end.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

// Adds the `load` subcommand to `app`; returns it. `*exit_code` is set when it runs.
CLI::App* AddLoadCommand(CLI::App& app, int* exit_code);

}  // namespace tessera
