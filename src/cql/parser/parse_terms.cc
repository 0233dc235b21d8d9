// Terms, names, relations, selectors, USING and WITH properties.
#include <set>

#include "common/bytes.h"
#include "cql/parser/parser_core.h"

namespace tessera::cql::internal {
namespace {

// Cassandra's reserved keywords: never an unquoted identifier.
const std::set<std::string>& ReservedKeywords() {
  static const std::set<std::string> kWords = {
      "add", "allow", "alter", "and", "apply", "asc", "authorize", "batch", "begin", "by", "columnfamily",
      "create", "delete", "desc", "describe", "drop", "entries", "execute", "from", "full", "grant", "if",
      "in", "index", "infinity", "insert", "into", "is", "keyspace", "limit", "modify", "nan", "norecursive",
      "not", "null", "of", "on", "or", "order", "primary", "rename", "replace", "revoke", "schema", "select",
      "set", "table", "to", "token", "truncate", "unlogged", "update", "use", "using", "view", "where", "with"};
  return kWords;
}

Relation::Op OpOf(const std::string& p) {
  if (p == "=" || p == "==") return Relation::Op::kEq;
  if (p == "!=") return Relation::Op::kNe;
  if (p == "<") return Relation::Op::kLt;
  if (p == "<=") return Relation::Op::kLe;
  if (p == ">") return Relation::Op::kGt;
  return Relation::Op::kGe;
}

bool IsComparison(const Token& t) {
  return t.kind == TokenKind::kPunctuation &&
         (t.text == "=" || t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" ||
          t.text == ">=");
}

}  // namespace

Status ParserCore::Identifier(std::string* out, const char* what) {
  const Token& t = Peek();
  if (t.kind == TokenKind::kQuotedIdentifier ||
      (t.kind == TokenKind::kIdentifier && !ReservedKeywords().count(t.text))) {
    *out = Next().text;
    return Status::OK();
  }
  return Unexpected(what);
}

Status ParserCore::QualifiedTableName(QualifiedName* out) {
  std::string first;
  TESSERA_RETURN_IF_ERROR(Identifier(&first, "a table name"));
  if (AcceptPunct(".")) {
    out->keyspace = first;
    return Identifier(&out->name, "a table name");
  }
  out->name = first;
  return Status::OK();
}

Status ParserCore::ParseBindMarker(Term* out) {
  const Token& t = Next();
  out->kind = Term::Kind::kBindMarker;
  out->bind_index = bind_count_++;
  out->bind_name = t.kind == TokenKind::kNamedBindMarker ? t.text : "";
  bind_names_.push_back(out->bind_name);
  return Status::OK();
}

Status ParserCore::ParseCollectionLiteral(Term* out) {
  const Token& open = Next();
  if (open.text == "[") {
    out->kind = Term::Kind::kList;
    if (AcceptPunct("]")) return Status::OK();
    do {
      Term e;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&e));
      out->elements.push_back(std::move(e));
    } while (AcceptPunct(","));
    return ExpectPunct("]");
  }
  // '{': a set, a map, or (empty) either; the executor decides from the type.
  out->kind = Term::Kind::kSet;
  if (AcceptPunct("}")) return Status::OK();
  const Token& key = Peek();
  const bool field_name = (key.kind == TokenKind::kIdentifier && !AtKeyword("true") && !AtKeyword("false") &&
                           !AtKeyword("null") && !AtKeyword("nan") && !AtKeyword("infinity")) ||
                          key.kind == TokenKind::kQuotedIdentifier;
  if (field_name && AtPunct(":", 1)) {  // {field: value, ...}: a user type literal
    out->kind = Term::Kind::kUserType;
    do {
      std::string name;
      TESSERA_RETURN_IF_ERROR(Identifier(&name, "a field name"));
      TESSERA_RETURN_IF_ERROR(ExpectPunct(":"));
      Term v;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&v));
      out->field_names.push_back(std::move(name));
      out->elements.push_back(std::move(v));
    } while (AcceptPunct(","));
    return ExpectPunct("}");
  }
  Term first;
  TESSERA_RETURN_IF_ERROR(ParseTerm(&first));
  if (AcceptPunct(":")) {
    out->kind = Term::Kind::kMap;
    Term v;
    TESSERA_RETURN_IF_ERROR(ParseTerm(&v));
    out->elements.push_back(std::move(first));
    out->map_values.push_back(std::move(v));
    while (AcceptPunct(",")) {
      Term k, val;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&k));
      TESSERA_RETURN_IF_ERROR(ExpectPunct(":"));
      TESSERA_RETURN_IF_ERROR(ParseTerm(&val));
      out->elements.push_back(std::move(k));
      out->map_values.push_back(std::move(val));
    }
    return ExpectPunct("}");
  }
  out->elements.push_back(std::move(first));
  while (AcceptPunct(",")) {
    Term e;
    TESSERA_RETURN_IF_ERROR(ParseTerm(&e));
    out->elements.push_back(std::move(e));
  }
  return ExpectPunct("}");
}

// A scope guard for the nesting counters.
class DepthGuard {
 public:
  explicit DepthGuard(int* depth) : depth_(depth) {}
  ~DepthGuard() { --*depth_; }
 private:
  int* depth_;
};

namespace {

void MakeOperation(Term* out, std::string op, Term rhs) {
  Term node;
  node.kind = Term::Kind::kOperation;
  node.position = out->position;
  node.function_name = std::move(op);
  node.elements.push_back(std::move(*out));
  node.elements.push_back(std::move(rhs));
  *out = std::move(node);
}

void MakeOperation(Selector* out, std::string op, Selector rhs) {
  Selector node;
  node.kind = Selector::Kind::kOperation;
  node.position = out->position;
  node.name = std::move(op);
  node.args.push_back(std::move(*out));
  node.args.push_back(std::move(rhs));
  *out = std::move(node);
}

}  // namespace

// operand (op operand)*, left-associative. In terms, an operator continues
// only when a term follows it (so `[1] + l` stays a list prepend).
template <typename Node>
Status ParserCore::ParseOperators(Node* out, std::initializer_list<const char*> ops, Status (ParserCore::*operand)(Node*),
                                  bool terms) {
  TESSERA_RETURN_IF_ERROR((this->*operand)(out));
  for (;;) {
    const char* op = nullptr;
    for (const char* o : ops) {
      if (AtPunct(o)) op = o;
    }
    if (!op || (terms && !TermStartsAt(1))) return Status::OK();
    Next();
    Node rhs;
    TESSERA_RETURN_IF_ERROR((this->*operand)(&rhs));
    MakeOperation(out, op, std::move(rhs));
  }
}

// A token that can start an operand of an arithmetic term: a literal, a bind
// marker, a collection or parenthesised term, a negative operand, a function
// call. A bare identifier cannot (`[1] + l` prepends to column l).
bool ParserCore::TermStartsAt(size_t ahead) const {
  const Token& t = Peek(ahead);
  switch (t.kind) {
    case TokenKind::kString: case TokenKind::kInteger: case TokenKind::kFloat: case TokenKind::kUuid:
    case TokenKind::kBlob: case TokenKind::kDuration: case TokenKind::kBindMarker: case TokenKind::kNamedBindMarker:
      return true;
    case TokenKind::kIdentifier:
      return AtPunct("(", ahead + 1);
    default:
      return AtPunct("(", ahead) || AtPunct("[", ahead) || AtPunct("{", ahead) || AtPunct("-", ahead);
  }
}

Status ParserCore::ParseTerm(Term* out) {
  TESSERA_RETURN_IF_ERROR(Nest(&term_depth_));
  DepthGuard guard(&term_depth_);
  return ParseOperators(out, {"+", "-"}, &ParserCore::ParseTermProduct, /*terms=*/true);
}

Status ParserCore::ParseTermProduct(Term* out) {
  return ParseOperators(out, {"*", "/", "%"}, &ParserCore::ParseSimpleTerm, /*terms=*/true);
}

Status ParserCore::ParseSimpleTerm(Term* out) {
  TESSERA_RETURN_IF_ERROR(Nest(&term_depth_));
  DepthGuard guard(&term_depth_);
  const Token& t = Peek();
  out->position = t.position;
  switch (t.kind) {
    case TokenKind::kString: out->kind = Term::Kind::kString; out->text = Next().text; return Status::OK();
    case TokenKind::kInteger: out->kind = Term::Kind::kInteger; out->text = Next().text; return Status::OK();
    case TokenKind::kFloat: out->kind = Term::Kind::kFloat; out->text = Next().text; return Status::OK();
    case TokenKind::kUuid: out->kind = Term::Kind::kUuid; out->text = Next().text; return Status::OK();
    case TokenKind::kBlob: out->kind = Term::Kind::kBlob; out->text = Next().text; return Status::OK();
    case TokenKind::kDuration: out->kind = Term::Kind::kDuration; out->text = Next().text; return Status::OK();
    case TokenKind::kBindMarker:
    case TokenKind::kNamedBindMarker:
      return ParseBindMarker(out);
    default:
      break;
  }
  if (AtPunct("-")) {  // negative number, -NaN, -Infinity
    const Token& n = Peek(1);
    if (n.kind == TokenKind::kInteger || n.kind == TokenKind::kFloat || n.kind == TokenKind::kDuration) {
      Next();
      out->kind = n.kind == TokenKind::kInteger ? Term::Kind::kInteger
                : n.kind == TokenKind::kFloat ? Term::Kind::kFloat : Term::Kind::kDuration;
      out->text = "-" + Next().text;
      return Status::OK();
    }
    if (TermStartsAt(1) && !AtPunct("-", 1)) {  // -? , -(term), -fn(...): a negation
      Next();
      out->kind = Term::Kind::kOperation;
      out->function_name = "-";
      Term inner;
      TESSERA_RETURN_IF_ERROR(ParseSimpleTerm(&inner));
      out->elements.push_back(std::move(inner));
      return Status::OK();
    }
    return Unexpected("a number after '-'");
  }
  if (AtPunct("[") || AtPunct("{")) return ParseCollectionLiteral(out);
  if (AtPunct("(")) {
    Next();
    // (type) term: a type hint, as in (int) ?
    if (Peek().kind == TokenKind::kIdentifier && AtPunct(")", 1) && !ReservedKeywords().count(Peek().text) &&
        Peek(2).kind != TokenKind::kEnd && !AtPunct(",", 2) && !AtPunct(")", 2) && !AtPunct(";", 2) &&
        !IsComparison(Peek(2)) && !AtKeyword("and", 2)) {
      out->kind = Term::Kind::kTypeHint;
      out->function_name = Next().text;
      Next();  // ')'
      Term inner;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&inner));
      out->elements.push_back(std::move(inner));
      return Status::OK();
    }
    out->kind = Term::Kind::kTuple;
    do {
      Term e;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&e));
      out->elements.push_back(std::move(e));
    } while (AcceptPunct(","));
    TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
    if (out->elements.size() == 1 && out->elements[0].kind == Term::Kind::kOperation) {
      Term grouped = std::move(out->elements[0]);  // (a + b): a grouping, not a 1-tuple
      *out = std::move(grouped);
    }
    return Status::OK();
  }
  if (t.kind == TokenKind::kIdentifier) {
    if (t.text == "true" || t.text == "false") {
      out->kind = Term::Kind::kBoolean;
      out->text = Next().text;
      return Status::OK();
    }
    if (t.text == "null") {
      Next();
      out->kind = Term::Kind::kNull;
      return Status::OK();
    }
    if (AtPunct("(", 1) || (AtPunct(".", 1) && AtPunct("(", 3))) {  // [keyspace.]function(args)
      out->kind = Term::Kind::kFunctionCall;
      out->function_name = Next().text;
      if (AcceptPunct(".")) out->function_name += "." + Next().text;
      Next();  // '('
      if (AcceptPunct(")")) return Status::OK();
      if (AsciiLower(out->function_name) == "nextval" && Peek().kind != TokenKind::kString) {
        // nextval([ks.]sequence): the argument names a sequence (db/sequences.h), kept as "ks.name" text.
        QualifiedName name;
        Term a;
        a.kind = Term::Kind::kString;
        a.position = Peek().position;
        TESSERA_RETURN_IF_ERROR(QualifiedTableName(&name));
        a.text = name.keyspace.empty() ? name.name : name.keyspace + "." + name.name;
        out->elements.push_back(std::move(a));
        return ExpectPunct(")");
      }
      do {
        Term a;
        TESSERA_RETURN_IF_ERROR(ParseTerm(&a));
        out->elements.push_back(std::move(a));
      } while (AcceptPunct(","));
      return ExpectPunct(")");
    }
  }
  return Unexpected("a value");
}

Status ParserCore::ParseRelations(std::vector<Relation>* out) {
  do {
    Relation r;
    TESSERA_RETURN_IF_ERROR(ParseRelation(&r));
    out->push_back(std::move(r));
  } while (AcceptKeyword("and"));
  return Status::OK();
}

Status ParserCore::ParseRelation(Relation* r) {
  r->position = Peek().position;
  if (AtKeyword("token") && AtPunct("(", 1)) {
    Next();
    Next();
    r->lhs = Relation::Lhs::kToken;
    do {
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a partition key column"));
      r->columns.push_back(c);
    } while (AcceptPunct(","));
    TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  } else if (AtPunct("(")) {
    Next();
    r->lhs = Relation::Lhs::kMultiColumn;
    do {
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a clustering column"));
      r->columns.push_back(c);
    } while (AcceptPunct(","));
    TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  } else {
    std::string c;
    TESSERA_RETURN_IF_ERROR(Identifier(&c, "a column name"));
    r->columns.push_back(c);
    if (AcceptPunct("[")) {
      r->lhs = Relation::Lhs::kMapElement;
      Term key;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&key));
      r->map_key = std::move(key);
      TESSERA_RETURN_IF_ERROR(ExpectPunct("]"));
    } else if (AcceptPunct(".")) {
      r->lhs = Relation::Lhs::kField;
      TESSERA_RETURN_IF_ERROR(Identifier(&r->field, "a field name"));
    }
  }
  if (IsComparison(Peek())) {
    r->op = OpOf(Next().text);
    return ParseTerm(&r->value);
  }
  if (AcceptKeyword("in")) {
    r->op = Relation::Op::kIn;
    if (Peek().kind == TokenKind::kBindMarker || Peek().kind == TokenKind::kNamedBindMarker) {
      r->in_marker = true;
      return ParseTerm(&r->value);
    }
    TESSERA_RETURN_IF_ERROR(ExpectPunct("("));
    if (AcceptPunct(")")) return Status::OK();
    do {
      Term v;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&v));
      r->in_values.push_back(std::move(v));
    } while (AcceptPunct(","));
    return ExpectPunct(")");
  }
  if (AcceptKeyword("contains")) {
    r->op = AcceptKeyword("key") ? Relation::Op::kContainsKey : Relation::Op::kContains;
    return ParseTerm(&r->value);
  }
  if (AcceptKeyword("like")) {
    r->op = Relation::Op::kLike;
    return ParseTerm(&r->value);
  }
  if (AcceptKeyword("is")) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("not"));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("null"));
    r->op = Relation::Op::kIsNotNull;
    return Status::OK();
  }
  return Unexpected("an operator (=, <, <=, >, >=, !=, IN, CONTAINS)");
}

Status ParserCore::ParseSelector(Selector* out, bool allow_alias) {
  TESSERA_RETURN_IF_ERROR(Nest(&selector_depth_));
  DepthGuard guard(&selector_depth_);
  TESSERA_RETURN_IF_ERROR(ParseSelectorSum(out));
  if (allow_alias && AcceptKeyword("as")) TESSERA_RETURN_IF_ERROR(Identifier(&out->alias, "an alias"));
  return Status::OK();
}

Status ParserCore::ParseSelectorSum(Selector* out) {
  return ParseOperators(out, {"+", "-"}, &ParserCore::ParseSelectorProduct, /*terms=*/false);
}

Status ParserCore::ParseSelectorProduct(Selector* out) {
  return ParseOperators(out, {"*", "/", "%"}, &ParserCore::ParseSelectorUnit, /*terms=*/false);
}

// One operand: a selector as before arithmetic, or - operand (a negation of
// anything but a number literal, which is a negative literal).
Status ParserCore::ParseSelectorUnit(Selector* out) {
  TESSERA_RETURN_IF_ERROR(Nest(&selector_depth_));
  DepthGuard guard(&selector_depth_);
  out->position = Peek().position;
  if (AtPunct("-") && Peek(1).kind != TokenKind::kInteger && Peek(1).kind != TokenKind::kFloat &&
      Peek(1).kind != TokenKind::kDuration) {
    Next();
    out->kind = Selector::Kind::kOperation;
    out->name = "-";
    Selector inner;
    TESSERA_RETURN_IF_ERROR(ParseSelectorUnit(&inner));
    out->args.push_back(std::move(inner));
    return Status::OK();
  }
  const Token& t = Peek();
  // keyspace.function(args): a user-defined function named with its keyspace.
  const bool qualified = t.kind == TokenKind::kIdentifier && AtPunct(".", 1) &&
                         Peek(2).kind == TokenKind::kIdentifier && AtPunct("(", 3);
  if (qualified || (t.kind == TokenKind::kIdentifier && AtPunct("(", 1))) {
    std::string fn = t.text;
    if (qualified) {  // keyspace.function(args): a user-defined function named with its keyspace
      fn += "." + Peek(2).text;
      Next(); Next();
    }
    if (fn == "count" && (AtPunct("*", 2) || Peek(2).kind == TokenKind::kInteger) && AtPunct(")", 3)) {
      Next(); Next(); Next(); Next();
      out->kind = Selector::Kind::kCountStar;
      out->name = "count";
    } else if (fn == "writetime" || fn == "ttl") {
      Next(); Next();
      out->kind = fn == "ttl" ? Selector::Kind::kTtl : Selector::Kind::kWritetime;
      TESSERA_RETURN_IF_ERROR(Identifier(&out->name, "a column name"));
      TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
    } else if (fn == "cast") {
      Next(); Next();
      out->kind = Selector::Kind::kCast;
      Selector arg;
      TESSERA_RETURN_IF_ERROR(ParseSelector(&arg, /*allow_alias=*/false));  // AS introduces the type
      out->args.push_back(std::move(arg));
      TESSERA_RETURN_IF_ERROR(ExpectKeyword("as"));
      TESSERA_RETURN_IF_ERROR(TypeText(&out->cast_type));
      TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
    } else {
      Next(); Next();
      out->kind = Selector::Kind::kFunction;
      out->name = fn;
      if (!AcceptPunct(")")) {
        do {
          Selector arg;
          TESSERA_RETURN_IF_ERROR(ParseSelector(&arg));
          out->args.push_back(std::move(arg));
        } while (AcceptPunct(","));
        TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
      }
    }
  } else if (t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kQuotedIdentifier) {
    out->kind = Selector::Kind::kColumn;
    TESSERA_RETURN_IF_ERROR(Identifier(&out->name, "a column name"));
  } else {
    out->kind = Selector::Kind::kTerm;
    Term term;
    TESSERA_RETURN_IF_ERROR(ParseTerm(&term));
    out->term = std::move(term);
  }
  while (out->kind != Selector::Kind::kTerm && (AtPunct(".") || AtPunct("["))) {
    Selector outer;
    outer.position = out->position;
    if (AcceptPunct(".")) {  // sel.field of a user type
      outer.kind = Selector::Kind::kField;
      TESSERA_RETURN_IF_ERROR(Identifier(&outer.name, "a field name"));
    } else {  // sel[key], sel[from..to], sel[..to], sel[from..] of a set or map
      Next();
      auto at_range = [&] { return AtPunct(".") && AtPunct(".", 1); };
      outer.kind = Selector::Kind::kElement;
      if (!at_range()) {
        Term key;
        TESSERA_RETURN_IF_ERROR(ParseTerm(&key));
        outer.term = std::move(key);
      }
      if (at_range()) {
        Next();
        Next();
        outer.kind = Selector::Kind::kSlice;
        outer.slice_from = std::move(outer.term);
        outer.term.reset();
        if (!AtPunct("]")) {
          Term to;
          TESSERA_RETURN_IF_ERROR(ParseTerm(&to));
          outer.slice_to = std::move(to);
        }
      }
      TESSERA_RETURN_IF_ERROR(ExpectPunct("]"));
    }
    outer.args.push_back(std::move(*out));
    *out = std::move(outer);
  }
  return Status::OK();
}

Status ParserCore::ParseUsing(Using* out) {
  if (!AcceptKeyword("using")) return Status::OK();
  do {
    if (AcceptKeyword("ttl")) {
      Term t;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&t));
      out->ttl = std::move(t);
    } else if (AcceptKeyword("timestamp")) {
      Term t;
      TESSERA_RETURN_IF_ERROR(ParseTerm(&t));
      out->timestamp = std::move(t);
    } else {
      return Unexpected("TTL or TIMESTAMP");
    }
  } while (AcceptKeyword("and"));
  return Status::OK();
}

Status ParserCore::ParseProperties(std::vector<Property>* out) {
  do {
    Property p;
    const Token& t = Peek();
    if (t.kind != TokenKind::kIdentifier && t.kind != TokenKind::kQuotedIdentifier) return Unexpected("a property name");
    p.name = Next().text;
    TESSERA_RETURN_IF_ERROR(ExpectPunct("="));
    if (Peek().kind == TokenKind::kIdentifier && !AtKeyword("true") && !AtKeyword("false") && !AtPunct("(", 1)) {
      p.value.kind = Term::Kind::kString;  // bare words, e.g. speculative_retry = NONE
      p.value.position = Peek().position;
      p.value.text = Next().text;
    } else {
      TESSERA_RETURN_IF_ERROR(ParseTerm(&p.value));
    }
    out->push_back(std::move(p));
  } while (AcceptKeyword("and"));
  return Status::OK();
}

Status ParserCore::TypeText(std::string* out) {
  TESSERA_RETURN_IF_ERROR(Nest(&type_depth_));
  DepthGuard guard(&type_depth_);
  // A type name as CqlType::Parse reads it: a "quoted" user type keeps its quotes.
  auto name_text = [](const Token& token) {
    if (token.kind != TokenKind::kQuotedIdentifier) return token.text;
    std::string q = "\"";
    for (char c : token.text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  const Token& t = Peek();
  // Reserved words are no types, except those that name one (set<...>).
  if ((t.kind != TokenKind::kIdentifier && t.kind != TokenKind::kQuotedIdentifier) ||
      (t.kind == TokenKind::kIdentifier && ReservedKeywords().count(t.text) && !AtPunct("<", 1))) {
    return Unexpected("a type");
  }
  *out = name_text(Next());
  if (AcceptPunct(".")) {  // keyspace.user_type
    const Token& type_name = Peek();
    if (type_name.kind != TokenKind::kIdentifier && type_name.kind != TokenKind::kQuotedIdentifier) {
      return Unexpected("a type name");
    }
    *out += "." + name_text(Next());
    return Status::OK();
  }
  if (AcceptPunct("<")) {
    *out += "<";
    do {
      std::string inner;
      if (Peek().kind == TokenKind::kInteger) {
        inner = Next().text;  // vector<float, 3>: the dimension
      } else {
        TESSERA_RETURN_IF_ERROR(TypeText(&inner));
      }
      if (out->back() != '<') *out += ", ";
      *out += inner;
    } while (AcceptPunct(","));
    TESSERA_RETURN_IF_ERROR(ExpectPunct(">"));
    *out += ">";
  }
  return Status::OK();
}

}  // namespace tessera::cql::internal
