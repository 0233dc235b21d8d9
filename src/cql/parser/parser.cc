#include "cql/parser/parser.h"

#include "cql/parser/parser_core.h"

namespace tessera::cql {

namespace internal {

const Token& ParserCore::Peek(size_t ahead) const {
  size_t i = std::min(pos_ + ahead, tokens_.size() - 1);  // the last token is kEnd
  return tokens_[i];
}

const Token& ParserCore::Next() {
  const Token& t = Peek();
  if (pos_ < tokens_.size() - 1) ++pos_;
  return t;
}

bool ParserCore::AtKeyword(const char* word, size_t ahead) const {
  const Token& t = Peek(ahead);
  return t.kind == TokenKind::kIdentifier && t.text == word;
}

bool ParserCore::AtPunct(const char* p, size_t ahead) const {
  const Token& t = Peek(ahead);
  return t.kind == TokenKind::kPunctuation && t.text == p;
}

bool ParserCore::AcceptKeyword(const char* word) {
  if (!AtKeyword(word)) return false;
  Next();
  return true;
}

bool ParserCore::AcceptPunct(const char* p) {
  if (!AtPunct(p)) return false;
  Next();
  return true;
}

Status ParserCore::Unexpected(const char* expected) const {
  const Token& t = Peek();
  std::string at = t.kind == TokenKind::kEnd ? "end of input" : "input '" + (t.raw.empty() ? t.text : t.raw) + "'";
  return Status::SyntaxError("line " + std::to_string(t.position.line) + ":" + std::to_string(t.position.column) +
                             " no viable alternative at " + at + " (expected " + expected + ")");
}

Status ParserCore::ExpectKeyword(const char* word) {
  if (AcceptKeyword(word)) return Status::OK();
  std::string upper(word);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return Unexpected(upper.c_str());
}

Status ParserCore::ExpectPunct(const char* p) {
  if (AcceptPunct(p)) return Status::OK();
  return Unexpected((std::string("'") + p + "'").c_str());
}

Status ParserCore::Nest(int* depth) const {
  if (*depth >= kMaxNesting) {
    const Token& t = Peek();
    return Status::SyntaxError("line " + std::to_string(t.position.line) + ":" + std::to_string(t.position.column) +
                               " nesting deeper than " + std::to_string(kMaxNesting) + " levels");
  }
  ++*depth;
  return Status::OK();
}

Result<ParsedStatement> ParserCore::ParseOne() {
  ParsedStatement out;
  auto run = [&](auto parse, auto value) -> Status {
    TESSERA_RETURN_IF_ERROR((this->*parse)(&value));
    out.statement = std::move(value);
    return Status::OK();
  };
  Status s;
  if (AtRoleStatement()) {
    if (AtKeyword("create")) s = ParseCreateRole(&out.statement);
    else if (AtKeyword("alter")) s = ParseAlterRole(&out.statement);
    else s = ParseDropRole(&out.statement);
  } else if (AtFunctionStatement()) {
    s = ParseFunction(&out.statement);
  } else if (AtKeyword("grant") || AtKeyword("revoke")) s = ParseGrantOrRevoke(&out.statement);
  else if (AtKeyword("list")) s = ParseList(&out.statement);
  else if (AtKeyword("select")) s = run(&ParserCore::ParseSelect, SelectStatement{});
  else if (AtKeyword("insert")) s = run(&ParserCore::ParseInsert, InsertStatement{});
  else if (AtKeyword("update")) s = run(&ParserCore::ParseUpdate, UpdateStatement{});
  else if (AtKeyword("delete")) s = run(&ParserCore::ParseDelete, DeleteStatement{});
  else if (AtKeyword("begin")) s = run(&ParserCore::ParseBatch, BatchStatement{});
  else if (AtKeyword("create")) s = ParseCreate(&out.statement);
  else if (AtKeyword("alter")) s = ParseAlter(&out.statement);
  else if (AtKeyword("drop")) s = run(&ParserCore::ParseDrop, DropStatement{});
  else if (AtKeyword("truncate")) s = run(&ParserCore::ParseTruncate, TruncateStatement{});
  else if (AtKeyword("use")) s = run(&ParserCore::ParseUse, UseStatement{});
  else if (AtKeyword("describe") || AtKeyword("desc")) s = run(&ParserCore::ParseDescribe, DescribeStatement{});
  else s = Unexpected("a statement");
  TESSERA_RETURN_IF_ERROR(s);
  AcceptPunct(";");
  if (Peek().kind != TokenKind::kEnd) return Unexpected("end of statement");
  out.bind_marker_count = bind_count_;
  out.bind_marker_names = bind_names_;
  return out;
}

}  // namespace internal

Result<ParsedStatement> ParseStatement(std::string_view cql) {
  TESSERA_ASSIGN_OR_RETURN(auto tokens, Tokenize(cql));
  return internal::ParserCore(std::move(tokens)).ParseOne();
}

}  // namespace tessera::cql
