// CREATE [OR REPLACE] FUNCTION / AGGREGATE and DROP FUNCTION / AGGREGATE,
// with Cassandra's grammar (Parser.g: createFunctionStatement,
// createAggregateStatement, dropFunctionStatement, dropAggregateStatement).
#include "cql/parser/parser_core.h"

namespace tessera::cql::internal {

bool ParserCore::AtFunctionStatement() const {
  if (AtKeyword("drop")) return AtKeyword("function", 1) || AtKeyword("aggregate", 1);
  if (!AtKeyword("create")) return false;
  const size_t at = AtKeyword("or", 1) && AtKeyword("replace", 2) ? 3 : 1;
  return AtKeyword("function", at) || AtKeyword("aggregate", at);
}

Status ParserCore::ParseFunction(RawStatement* out) {
  FunctionStatement f;
  f.drop = AcceptKeyword("drop");
  if (!f.drop) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("create"));
    if (AcceptKeyword("or")) {
      TESSERA_RETURN_IF_ERROR(ExpectKeyword("replace"));
      f.or_replace = true;
    }
  }
  f.aggregate = AcceptKeyword("aggregate");
  if (!f.aggregate) TESSERA_RETURN_IF_ERROR(ExpectKeyword("function"));
  if (f.drop) {
    if (AcceptKeyword("if")) {
      TESSERA_RETURN_IF_ERROR(ExpectKeyword("exists"));
      f.if_not_exists = true;
    }
  } else {
    TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&f.if_not_exists));
    if (f.or_replace && f.if_not_exists) {
      return Status::InvalidArgument("Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives");
    }
  }
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&f.name));
  // The signature: DROP's is optional; a function's arguments are named.
  if (AcceptPunct("(")) {
    f.signature_given = true;
    if (!AcceptPunct(")")) {
      do {
        if (!f.drop && !f.aggregate) {
          std::pair<std::string, std::string> argument;
          TESSERA_RETURN_IF_ERROR(Identifier(&argument.first, "an argument name"));
          TESSERA_RETURN_IF_ERROR(TypeText(&argument.second));
          f.arguments.push_back(std::move(argument));
        } else {
          std::string type;
          TESSERA_RETURN_IF_ERROR(TypeText(&type));
          f.argument_types.push_back(std::move(type));
        }
      } while (AcceptPunct(","));
      TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
    }
  } else if (!f.drop) {
    return Unexpected("(");
  }
  if (f.drop) {
    *out = std::move(f);
    return Status::OK();
  }
  if (f.aggregate) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("sfunc"));
    TESSERA_RETURN_IF_ERROR(Identifier(&f.state_function, "a state function"));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("stype"));
    TESSERA_RETURN_IF_ERROR(TypeText(&f.state_type));
    if (AcceptKeyword("finalfunc")) TESSERA_RETURN_IF_ERROR(Identifier(&f.final_function, "a final function"));
    if (AcceptKeyword("initcond")) {
      Term initial;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&initial));
      f.initial_condition = std::move(initial);
    }
    *out = std::move(f);
    return Status::OK();
  }
  // (CALLED | RETURNS NULL) ON NULL INPUT RETURNS type LANGUAGE name AS body
  if (AcceptKeyword("called")) {
    f.called_on_null_input = true;
  } else {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("returns"));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("null"));
  }
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("on"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("null"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("input"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("returns"));
  TESSERA_RETURN_IF_ERROR(TypeText(&f.return_type));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("language"));
  TESSERA_RETURN_IF_ERROR(Identifier(&f.language, "a language"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("as"));
  if (Peek().kind != TokenKind::kString) return Unexpected("the function body (a string)");
  f.body = Next().text;
  *out = std::move(f);
  return Status::OK();
}

}  // namespace tessera::cql::internal
