#include "cql/parser/lexer.h"

#include <cctype>
#include <cstdio>

#include "common/bytes.h"

namespace tessera::cql {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)); }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Result<std::vector<Token>> Run() {
    // CQL text is UTF-8 (native protocol v4 §3 [long string]). Names, strings and options end up in
    // the schema and in JSON, so a byte that is not UTF-8 is refused here, where its position is known.
    if (const size_t bad = FirstInvalidUtf8(s_); bad != std::string_view::npos) {
      Advance(bad);
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(s_[bad]));
      return Error(pos_, std::string("invalid UTF-8 (byte ") + hex + ")");
    }
    std::vector<Token> out;
    for (;;) {
      TESSERA_RETURN_IF_ERROR(SkipSpaceAndComments());
      Token t;
      t.position = pos_;
      if (i_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      TESSERA_RETURN_IF_ERROR(Next(&t));
      out.push_back(std::move(t));
    }
  }

 private:
  Status Error(SourcePosition p, const std::string& what) const {
    return Status::SyntaxError("line " + std::to_string(p.line) + ":" + std::to_string(p.column) + " " + what);
  }
  char Peek(size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }
  void Advance(size_t n = 1) {
    for (size_t k = 0; k < n && i_ < s_.size(); ++k, ++i_) {
      if (s_[i_] == '\n') {
        ++pos_.line;
        pos_.column = 1;
      } else {
        ++pos_.column;
      }
    }
  }

  Status SkipSpaceAndComments() {
    for (;;) {
      while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) Advance();
      if ((Peek() == '-' && Peek(1) == '-') || (Peek() == '/' && Peek(1) == '/')) {
        while (i_ < s_.size() && s_[i_] != '\n') Advance();
        continue;
      }
      if (Peek() == '/' && Peek(1) == '*') {
        SourcePosition start = pos_;
        Advance(2);
        while (i_ < s_.size() && !(Peek() == '*' && Peek(1) == '/')) Advance();
        if (i_ >= s_.size()) return Error(start, "unterminated comment");
        Advance(2);
        continue;
      }
      return Status::OK();
    }
  }

  // A UUID is 8-4-4-4-12 hex digits; it may start with a digit or a letter.
  bool AtUuid() const {
    static const int kGroups[] = {8, 4, 4, 4, 12};
    size_t k = i_;
    for (int g = 0; g < 5; ++g) {
      for (int n = 0; n < kGroups[g]; ++n, ++k) {
        if (k >= s_.size() || !IsHex(s_[k])) return false;
      }
      if (g < 4) {
        if (k >= s_.size() || s_[k] != '-') return false;
        ++k;
      }
    }
    return k >= s_.size() || !IsIdentChar(s_[k]);
  }

  // An ISO 8601 duration with designators as Cassandra's lexer takes one: an
  // uppercase P, then P<n>W, or (<n>Y)?(<n>M)?(<n>D)?(T(<n>H)?(<n>M)?(<n>S)?)?
  // with at least one number, the whole word. So p50, p99, pt and P are
  // identifiers (metrics schemas name columns so), and P1Y2M, PT3H, P2W durations.
  static bool IsIsoDuration(std::string_view w) {
    if (w.size() < 3 || w[0] != 'P') return false;
    size_t k = 1;
    auto number_then = [&](char designator) {  // <digits><designator>, case-insensitive
      size_t j = k;
      while (j < w.size() && IsDigit(w[j])) ++j;
      if (j == k || j >= w.size() || std::toupper(static_cast<unsigned char>(w[j])) != designator) return false;
      k = j + 1;
      return true;
    };
    if (number_then('W')) return k == w.size();
    bool any = false;
    for (char d : {'Y', 'M', 'D'}) any |= number_then(d);
    if (k < w.size() && (w[k] == 'T' || w[k] == 't')) {
      ++k;
      bool time = false;
      for (char d : {'H', 'M', 'S'}) time |= number_then(d);
      if (!time) return false;
      any = true;
    }
    return any && k == w.size();
  }

  // Duration units as CQL accepts them: y mo w d h m s ms us µs ns.
  bool AtDuration() const {
    size_t k = i_;
    if (!IsDigit(s_[k])) return false;
    bool any = false;
    while (k < s_.size() && IsDigit(s_[k])) {
      while (k < s_.size() && IsDigit(s_[k])) ++k;
      size_t unit = k;
      while (k < s_.size() && std::isalpha(static_cast<unsigned char>(s_[k]))) ++k;
      std::string u = Lower(s_.substr(unit, k - unit));
      if (u != "y" && u != "mo" && u != "w" && u != "d" && u != "h" && u != "m" && u != "s" && u != "ms" &&
          u != "us" && u != "ns") {
        return false;
      }
      any = true;
    }
    return any && (k >= s_.size() || !IsIdentChar(s_[k]));
  }

  size_t Take(Token* t, size_t n) {
    t->text.assign(s_.substr(i_, n));
    Advance(n);
    return n;
  }

  Status Next(Token* t) {
    char c = Peek();
    if (AtUuid()) {
      t->kind = TokenKind::kUuid;
      Take(t, 36);
      return Status::OK();
    }
    if (c == '\'') return QuotedString(t);
    if (c == '$' && Peek(1) == '$') return DollarString(t);
    if (c == '"') return QuotedIdentifier(t);
    if (c == '0' && (Peek(1) == 'x' || Peek(1) == 'X')) {
      size_t k = 2;
      while (IsHex(Peek(k))) ++k;
      t->kind = TokenKind::kBlob;
      t->text.assign(s_.substr(i_ + 2, k - 2));
      Advance(k);
      return Status::OK();
    }
    // ".5" is a number, but not the "3" of "1..3" (a slice in s[1..3]).
    if (IsDigit(c) || (c == '.' && IsDigit(Peek(1)) && !(i_ > 0 && s_[i_ - 1] == '.'))) {
      if (AtDuration()) {
        size_t k = 0;
        while (IsIdentChar(Peek(k))) ++k;
        t->kind = TokenKind::kDuration;
        Take(t, k);
        return Status::OK();
      }
      return Number(t);
    }
    if (IsIdentStart(c)) {
      size_t k = 0;
      while (IsIdentChar(Peek(k))) ++k;
      std::string word = Lower(s_.substr(i_, k));
      if (IsIsoDuration(s_.substr(i_, k))) {
        t->kind = TokenKind::kDuration;
        Take(t, k);
        return Status::OK();
      }
      t->kind = word == "nan" || word == "infinity" ? TokenKind::kFloat : TokenKind::kIdentifier;
      t->text = word;
      t->raw.assign(s_.substr(i_, k));
      Advance(k);
      return Status::OK();
    }
    if (c == '?') {
      t->kind = TokenKind::kBindMarker;
      Take(t, 1);
      return Status::OK();
    }
    if (c == ':' && IsIdentStart(Peek(1))) {
      size_t k = 1;
      while (IsIdentChar(Peek(k))) ++k;
      t->kind = TokenKind::kNamedBindMarker;
      t->text = Lower(s_.substr(i_ + 1, k - 1));
      Advance(k);
      return Status::OK();
    }
    if (c == ':' && Peek(1) == '"') {
      Advance();
      TESSERA_RETURN_IF_ERROR(QuotedIdentifier(t));
      t->kind = TokenKind::kNamedBindMarker;
      return Status::OK();
    }
    static const char* kTwoChar[] = {"<=", ">=", "!=", "=="};
    for (const char* two : kTwoChar) {
      if (c == two[0] && Peek(1) == two[1]) {
        t->kind = TokenKind::kPunctuation;
        Take(t, 2);
        return Status::OK();
      }
    }
    if (std::string_view("()[]{},;.=<>+-*/%:").find(c) != std::string_view::npos) {
      t->kind = TokenKind::kPunctuation;
      Take(t, 1);
      return Status::OK();
    }
    return Error(pos_, std::string("unexpected character '") + c + "'");
  }

  Status Number(Token* t) {
    size_t k = 0;
    bool is_float = false;
    while (IsDigit(Peek(k))) ++k;
    if (Peek(k) == '.' && IsDigit(Peek(k + 1))) {
      is_float = true;
      ++k;
      while (IsDigit(Peek(k))) ++k;
    } else if (Peek(k) == '.' && Peek(k + 1) != '.' && !IsIdentStart(Peek(k + 1))) {
      is_float = true;  // "1." is a float
      ++k;
    }
    if (Peek(k) == 'e' || Peek(k) == 'E') {
      size_t e = k + 1;
      if (Peek(e) == '+' || Peek(e) == '-') ++e;
      if (IsDigit(Peek(e))) {
        is_float = true;
        k = e;
        while (IsDigit(Peek(k))) ++k;
      }
    }
    if (IsIdentStart(Peek(k))) return Error(pos_, "malformed number '" + std::string(s_.substr(i_, k + 1)) + "'");
    t->kind = is_float ? TokenKind::kFloat : TokenKind::kInteger;
    Take(t, k);
    return Status::OK();
  }

  Status QuotedString(Token* t) {
    SourcePosition start = pos_;
    Advance();
    t->kind = TokenKind::kString;
    for (;;) {
      if (i_ >= s_.size()) return Error(start, "unterminated string literal");
      if (Peek() == '\'') {
        if (Peek(1) == '\'') {
          t->text.push_back('\'');
          Advance(2);
          continue;
        }
        Advance();
        return Status::OK();
      }
      t->text.push_back(Peek());
      Advance();
    }
  }

  Status DollarString(Token* t) {
    SourcePosition start = pos_;
    Advance(2);
    t->kind = TokenKind::kString;
    size_t end = s_.find("$$", i_);
    if (end == std::string_view::npos) return Error(start, "unterminated $$ string literal");
    t->text.assign(s_.substr(i_, end - i_));
    Advance(end - i_ + 2);
    return Status::OK();
  }

  Status QuotedIdentifier(Token* t) {
    SourcePosition start = pos_;
    Advance();
    t->kind = TokenKind::kQuotedIdentifier;
    for (;;) {
      if (i_ >= s_.size()) return Error(start, "unterminated quoted identifier");
      if (Peek() == '"') {
        if (Peek(1) == '"') {
          t->text.push_back('"');
          Advance(2);
          continue;
        }
        Advance();
        if (t->text.empty()) return Error(start, "empty quoted identifier");
        return Status::OK();
      }
      t->text.push_back(Peek());
      Advance();
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  SourcePosition pos_;
};

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view cql) { return Lexer(cql).Run(); }

}  // namespace tessera::cql
