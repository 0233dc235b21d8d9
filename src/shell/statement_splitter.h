// StatementSplitter: turns the lines a user types (or a SOURCE file holds)
// into complete statements, as cqlsh does: a CQL statement ends at a ';'
// outside quotes ('...', "...", $$...$$) and comments (-- and // to the end
// of the line, /* ... */); it may span lines. Shell commands (DESCRIBE/DESC,
// SOURCE, CONSISTENCY, PAGING, EXPAND, HELP, EXIT, QUIT, CLEAR) may also end
// at the end of their line without ';'.
//
// Thread safety: one thread.
#pragma once

#include <string>
#include <vector>

namespace tessera::shell {

class StatementSplitter {
 public:
  // Feeds one line (without its newline); returns the statements it
  // completed, each without its ';' and trimmed.
  std::vector<std::string> Feed(const std::string& line);
  // True while a statement has begun but not ended (the shell shows the
  // continuation prompt).
  bool pending() const;
  // The unfinished statement (for an error at end of input), and drops it.
  std::string TakePending();

 private:
  enum class State { kCode, kSingle, kDouble, kDollar, kBlockComment };
  std::string buffer_;
  State state_ = State::kCode;
};

// The first word of a statement, upper-cased ("SELECT", "DESCRIBE", ...).
std::string FirstWord(const std::string& statement);
bool IsShellCommand(const std::string& first_word);

}  // namespace tessera::shell
