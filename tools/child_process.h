// Processes the local cluster launcher starts and stops: detached (own
// session, output to a log file, reparented when the launcher exits) and
// found again later by pid alone.
//
// Thread safety: none needed (the launcher is one thread).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace tessera {

// Starts argv[0] (a path) with argv in a new session, stdin from /dev/null,
// stdout and stderr appended to log_path. Returns its pid. IOError when it
// cannot be forked or the log cannot be opened; an exec failure shows as a
// process that exits 127 with the reason in the log.
Result<pid_t> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path);

// True while pid names a process that has not exited (a zombie counts as exited).
bool ProcessAlive(pid_t pid);

// True when the process's command line (argv[0] base name) contains `name`:
// a pid the launcher recorded may have been reused by another program.
bool ProcessIs(pid_t pid, const std::string& name);

// Sends `signal` and waits up to timeout_ms for the process to exit. True when it did.
bool SignalAndWait(pid_t pid, int signal, int timeout_ms);

// True once a TCP connection to address:port succeeds within timeout_ms
// (tried every 100 ms while `alive` still holds).
bool WaitForPort(const std::string& address, int port, int timeout_ms, pid_t alive);

// The last `lines` lines of a text file, for error messages.
std::string TailOfFile(const std::string& path, int lines);

}  // namespace tessera
