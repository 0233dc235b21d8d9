// Internal to the parser: the token cursor and the grammar methods, split
// over parse_terms.cc (terms, relations, selectors), parse_dml.cc and
// parse_ddl.cc. Not for use outside src/cql/parser.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "cql/parser/lexer.h"
#include "cql/parser/raw_statements.h"

namespace tessera::cql::internal {

class ParserCore {
 public:
  explicit ParserCore(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Result<ParsedStatement> ParseOne();

  // --- cursor ---
  const Token& Peek(size_t ahead = 0) const;
  const Token& Next();
  bool AtKeyword(const char* word, size_t ahead = 0) const;
  bool AtPunct(const char* p, size_t ahead = 0) const;
  bool AcceptKeyword(const char* word);
  bool AcceptPunct(const char* p);
  Status ExpectKeyword(const char* word);
  Status ExpectPunct(const char* p);
  Status Unexpected(const char* expected) const;

  // --- shared pieces (parse_terms.cc) ---
  Status Identifier(std::string* out, const char* what = "an identifier");
  Status QualifiedTableName(QualifiedName* out);
  Status ParseTerm(Term* out);
  Status ParseRelations(std::vector<Relation>* out);
  Status ParseRelation(Relation* out);
  Status ParseSelector(Selector* out, bool allow_alias = true);
  Status ParseUsing(Using* out);
  Status ParseProperties(std::vector<Property>* out);
  Status TypeText(std::string* out);
  // IF NOT EXISTS (sets *present) or nothing.
  Status ParseIfNotExists(bool* present);

  // --- statements ---
  Status ParseSelect(SelectStatement* out);                 // parse_dml.cc
  Status ParseInsert(InsertStatement* out);
  Status ParseUpdate(UpdateStatement* out);
  Status ParseDelete(DeleteStatement* out);
  Status ParseBatch(BatchStatement* out);
  Status ParseCreate(RawStatement* out);                    // parse_ddl.cc
  Status ParseAlter(RawStatement* out);
  Status ParseAlterType(RawStatement* out);  // after ALTER TYPE
  Status ParseCreateIndex(RawStatement* out);  // after CREATE
  Status ParseCreateView(RawStatement* out);   // after CREATE
  Status ParsePrimaryKeyColumns(std::vector<std::string>* partition_key, std::vector<std::string>* clustering);
  Status ParseTableWith(std::vector<std::pair<std::string, bool>>* clustering_order, bool* compact_storage,
                        std::vector<Property>* properties);
  Status ParseDrop(DropStatement* out);
  Status ParseTruncate(TruncateStatement* out);
  Status ParseDescribe(DescribeStatement* out);
  Status ParseUse(UseStatement* out);
  Status ParseCreateRole(RawStatement* out);                // parse_auth.cc
  Status ParseAlterRole(RawStatement* out);
  Status ParseDropRole(RawStatement* out);
  Status ParseGrantOrRevoke(RawStatement* out);
  Status ParseList(RawStatement* out);
  bool AtRoleStatement() const;  // CREATE / ALTER / DROP followed by ROLE or USER
  Status ParseFunction(RawStatement* out);                  // parse_functions.cc
  // CREATE [OR REPLACE] / DROP followed by FUNCTION or AGGREGATE.
  bool AtFunctionStatement() const;

 private:
  Status ParseCollectionLiteral(Term* out);
  // Arithmetic (Cassandra 4.0): sums of products of simple terms / selectors.
  Status ParseSimpleTerm(Term* out);
  Status ParseTermProduct(Term* out);
  bool TermStartsAt(size_t ahead) const;
  Status ParseSelectorSum(Selector* out);
  Status ParseSelectorProduct(Selector* out);
  Status ParseSelectorUnit(Selector* out);
  template <typename Node>
  Status ParseOperators(Node* out, std::initializer_list<const char*> ops, Status (ParserCore::*operand)(Node*),
                        bool terms);
  Status ParseBindMarker(Term* out);
  Status ParseConditions(std::vector<Relation>* out);
  Status ParseWhereAndConditions(std::vector<Relation>* where, bool* if_exists, std::vector<Relation>* conditions);
  Status RoleName(std::string* out);
  Status ParseRoleOptions(RoleOptions* out, bool user_form);
  Status ParsePermissions(std::vector<std::string>* out);
  Status ParseResource(ResourceName* out);

  // Bounds the recursion of nested terms, selectors and types so that
  // hostile input is a syntax error, not a stack overflow.
  static constexpr int kMaxNesting = 64;
  Status Nest(int* depth) const;

 public:
  int bind_count_ = 0;
  std::vector<std::string> bind_names_;

 private:
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int term_depth_ = 0, selector_depth_ = 0, type_depth_ = 0;
};

}  // namespace tessera::cql::internal
