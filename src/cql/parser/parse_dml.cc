// SELECT, INSERT, UPDATE, DELETE and BATCH.
#include "cql/parser/parser_core.h"

namespace tessera::cql::internal {

Status ParserCore::ParseSelect(SelectStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("select"));
  if (AcceptKeyword("json")) out->json = true;
  if (AtKeyword("distinct") && !AtPunct(",", 1) && !AtKeyword("from", 1)) {
    Next();
    out->distinct = true;
  }
  if (AcceptPunct("*")) {
    out->star = true;
  } else {
    do {
      Selector s;
      TESSERA_RETURN_IF_ERROR(ParseSelector(&s));
      out->selectors.push_back(std::move(s));
    } while (AcceptPunct(","));
  }
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("from"));
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&out->table));
  if (AcceptKeyword("where")) TESSERA_RETURN_IF_ERROR(ParseRelations(&out->where));
  if (AcceptKeyword("group")) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("by"));
    do {
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a primary key column"));
      out->group_by.push_back(std::move(c));
    } while (AcceptPunct(","));
  }
  if (AcceptKeyword("order")) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("by"));
    do {
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a clustering column"));
      if (AcceptKeyword("ann")) {
        TESSERA_RETURN_IF_ERROR(ExpectKeyword("of"));
        Term vector;
        TESSERA_RETURN_IF_ERROR(ParseTerm(&vector));
        if (!out->order_by.empty() || out->ann) {
          return Status::InvalidArgument("ANN ordering does not support any other ordering");
        }
        out->ann = SelectStatement::AnnOrdering{std::move(c), std::move(vector)};
        continue;
      }
      if (out->ann) return Status::InvalidArgument("ANN ordering does not support any other ordering");
      bool desc = false;
      if (AcceptKeyword("desc")) desc = true;
      else AcceptKeyword("asc");
      out->order_by.emplace_back(c, desc);
    } while (AcceptPunct(","));
  }
  if (AcceptKeyword("per")) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("partition"));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("limit"));
    Term t;
    TESSERA_RETURN_IF_ERROR(ParseTerm(&t));
    out->per_partition_limit = std::move(t);
  }
  if (AcceptKeyword("limit")) {
    Term t;
    TESSERA_RETURN_IF_ERROR(ParseTerm(&t));
    out->limit = std::move(t);
  }
  if (AcceptKeyword("allow")) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("filtering"));
    out->allow_filtering = true;
  }
  return Status::OK();
}

Status ParserCore::ParseInsert(InsertStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("insert"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("into"));
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&out->table));
  if (AcceptKeyword("json")) {
    Term j;
    TESSERA_RETURN_IF_ERROR(ParseTerm(&j));
    out->json = std::move(j);
    if (AcceptKeyword("default")) {
      if (AcceptKeyword("unset")) out->json_default_unset = true;
      else TESSERA_RETURN_IF_ERROR(ExpectKeyword("null"));
    }
  } else {
    TESSERA_RETURN_IF_ERROR(ExpectPunct("("));
    do {
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a column name"));
      out->columns.push_back(c);
    } while (AcceptPunct(","));
    TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("values"));
    TESSERA_RETURN_IF_ERROR(ExpectPunct("("));
    do {
      Term v;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&v));
      out->values.push_back(std::move(v));
    } while (AcceptPunct(","));
    TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  }
  TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&out->if_not_exists));
  return ParseUsing(&out->using_clause);
}

Status ParserCore::ParseConditions(std::vector<Relation>* out) { return ParseRelations(out); }

// WHERE relations, then optionally IF EXISTS or IF conditions (UPDATE and DELETE).
Status ParserCore::ParseWhereAndConditions(std::vector<Relation>* where, bool* if_exists,
                                           std::vector<Relation>* conditions) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("where"));
  TESSERA_RETURN_IF_ERROR(ParseRelations(where));
  if (AcceptKeyword("if")) {
    if (AcceptKeyword("exists")) *if_exists = true;
    else TESSERA_RETURN_IF_ERROR(ParseConditions(conditions));
  }
  return Status::OK();
}

Status ParserCore::ParseUpdate(UpdateStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("update"));
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&out->table));
  TESSERA_RETURN_IF_ERROR(ParseUsing(&out->using_clause));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("set"));
  do {
    Assignment a;
    a.position = Peek().position;
    TESSERA_RETURN_IF_ERROR(Identifier(&a.column, "a column name"));
    if (AcceptPunct("[")) {  // col[key] = value
      Term key;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&key));
      a.key = std::move(key);
      TESSERA_RETURN_IF_ERROR(ExpectPunct("]"));
      TESSERA_RETURN_IF_ERROR(ExpectPunct("="));
      a.op = Assignment::Op::kSetElement;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&a.value));
    } else if (AcceptPunct(".")) {  // col.field = value (a non-frozen user type)
      TESSERA_RETURN_IF_ERROR(Identifier(&a.field, "a field name"));
      TESSERA_RETURN_IF_ERROR(ExpectPunct("="));
      a.op = Assignment::Op::kSetField;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&a.value));
    } else if (AcceptPunct("+") || AtPunct("-")) {  // col += v / col -= v (Cassandra 4 shorthand)
      bool minus = AcceptPunct("-");
      TESSERA_RETURN_IF_ERROR(ExpectPunct("="));
      a.op = minus ? Assignment::Op::kRemove : Assignment::Op::kAppend;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&a.value));
    } else {
      TESSERA_RETURN_IF_ERROR(ExpectPunct("="));
      // col = col + v | col = col - v | col = v + col | col = v
      const Token& t = Peek();
      bool self_first = (t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kQuotedIdentifier) &&
                        t.text == a.column && (AtPunct("+", 1) || AtPunct("-", 1));
      if (self_first) {
        Next();
        a.op = Next().text == "+" ? Assignment::Op::kAppend : Assignment::Op::kRemove;
        TESSERA_RETURN_IF_ERROR(ParseTerm(&a.value));
      } else {
        TESSERA_RETURN_IF_ERROR(ParseTerm(&a.value));
        if (AcceptPunct("+")) {  // v + col: prepend
          std::string self;
          TESSERA_RETURN_IF_ERROR(Identifier(&self, "the assigned column"));
          if (self != a.column) return Unexpected(("column " + a.column).c_str());
          a.op = Assignment::Op::kPrepend;
        }
      }
    }
    out->assignments.push_back(std::move(a));
  } while (AcceptPunct(","));
  return ParseWhereAndConditions(&out->where, &out->if_exists, &out->conditions);
}

Status ParserCore::ParseDelete(DeleteStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("delete"));
  if (!AtKeyword("from")) {
    do {
      DeleteStatement::Target target;
      TESSERA_RETURN_IF_ERROR(Identifier(&target.column, "a column name"));
      if (AcceptPunct("[")) {
        Term key;
        TESSERA_RETURN_IF_ERROR(ParseTerm(&key));
        target.key = std::move(key);
        TESSERA_RETURN_IF_ERROR(ExpectPunct("]"));
      } else if (AcceptPunct(".")) {
        TESSERA_RETURN_IF_ERROR(Identifier(&target.field, "a field name"));
      }
      out->columns.push_back(std::move(target));
    } while (AcceptPunct(","));
  }
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("from"));
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&out->table));
  TESSERA_RETURN_IF_ERROR(ParseUsing(&out->using_clause));
  if (out->using_clause.ttl) return Status::SyntaxError("DELETE does not take USING TTL");
  return ParseWhereAndConditions(&out->where, &out->if_exists, &out->conditions);
}

Status ParserCore::ParseBatch(BatchStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("begin"));
  if (AcceptKeyword("unlogged")) out->type = BatchStatement::Type::kUnlogged;
  else if (AcceptKeyword("counter")) out->type = BatchStatement::Type::kCounter;
  else AcceptKeyword("logged");
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("batch"));
  TESSERA_RETURN_IF_ERROR(ParseUsing(&out->using_clause));
  while (!AtKeyword("apply")) {
    if (AtKeyword("insert")) {
      InsertStatement s;
      TESSERA_RETURN_IF_ERROR(ParseInsert(&s));
      out->statements.emplace_back(std::move(s));
    } else if (AtKeyword("update")) {
      UpdateStatement s;
      TESSERA_RETURN_IF_ERROR(ParseUpdate(&s));
      out->statements.emplace_back(std::move(s));
    } else if (AtKeyword("delete")) {
      DeleteStatement s;
      TESSERA_RETURN_IF_ERROR(ParseDelete(&s));
      out->statements.emplace_back(std::move(s));
    } else {
      return Unexpected("INSERT, UPDATE, DELETE or APPLY BATCH");
    }
    AcceptPunct(";");
  }
  Next();  // apply
  return ExpectKeyword("batch");
}

}  // namespace tessera::cql::internal
