#include "shell/statement_splitter.h"

#include <cctype>

namespace tessera::shell {
namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

std::string FirstWord(const std::string& statement) {
  std::string w;
  for (char c : Trim(statement)) {
    if (!std::isalpha(static_cast<unsigned char>(c))) break;
    w += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return w;
}

bool IsShellCommand(const std::string& w) {
  return w == "DESCRIBE" || w == "DESC" || w == "SOURCE" || w == "CONSISTENCY" || w == "PAGING" || w == "EXPAND" ||
         w == "HELP" || w == "EXIT" || w == "QUIT" || w == "CLEAR" || w == "CLS";
}

bool StatementSplitter::pending() const { return !Trim(buffer_).empty() || state_ != State::kCode; }

std::string StatementSplitter::TakePending() {
  std::string s = Trim(buffer_);
  buffer_.clear();
  state_ = State::kCode;
  return s;
}

std::vector<std::string> StatementSplitter::Feed(const std::string& line) {
  std::vector<std::string> out;
  if (state_ == State::kCode && Trim(buffer_).empty() && IsShellCommand(FirstWord(line))) {
    std::string s = Trim(line);
    while (!s.empty() && s.back() == ';') s.pop_back();
    out.push_back(Trim(s));
    buffer_.clear();
    return out;
  }
  if (!buffer_.empty()) buffer_ += '\n';
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const char next = i + 1 < line.size() ? line[i + 1] : '\0';
    switch (state_) {
      case State::kCode:
        if (c == ';') {
          std::string s = Trim(buffer_);
          if (!s.empty()) out.push_back(s);
          buffer_.clear();
          continue;
        }
        if ((c == '-' && next == '-') || (c == '/' && next == '/')) {
          i = line.size();  // a line comment: the rest of the line is dropped
          continue;
        }
        if (c == '/' && next == '*') {
          state_ = State::kBlockComment;
          ++i;
          continue;
        }
        if (c == '\'') state_ = State::kSingle;
        if (c == '"') state_ = State::kDouble;
        if (c == '$' && next == '$') {
          state_ = State::kDollar;
          buffer_ += c;
          ++i;
        }
        buffer_ += c;
        break;
      case State::kSingle:
      case State::kDouble:
        buffer_ += c;
        if (c == (state_ == State::kSingle ? '\'' : '"')) {
          if (next == c) {  // a doubled quote stays inside
            buffer_ += next;
            ++i;
          } else {
            state_ = State::kCode;
          }
        }
        break;
      case State::kDollar:
        buffer_ += c;
        if (c == '$' && next == '$') {
          buffer_ += next;
          ++i;
          state_ = State::kCode;
        }
        break;
      case State::kBlockComment:
        if (c == '*' && next == '/') {
          state_ = State::kCode;
          ++i;
        }
        break;
    }
  }
  return out;
}

}  // namespace tessera::shell
