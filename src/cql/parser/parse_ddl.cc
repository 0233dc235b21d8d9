// CREATE / ALTER / DROP KEYSPACE, TABLE and TYPE, TRUNCATE, USE.
#include "cql/parser/parser_core.h"

namespace tessera::cql::internal {
namespace {

bool AtTableWord(const ParserCore& p) { return p.AtKeyword("table") || p.AtKeyword("columnfamily"); }

}  // namespace

Status ParserCore::ParseIfNotExists(bool* present) {
  if (!AcceptKeyword("if")) return Status::OK();
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("not"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("exists"));
  *present = true;
  return Status::OK();
}

Status ParserCore::ParseCreate(RawStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("create"));
  if (AcceptKeyword("keyspace") || AcceptKeyword("schema")) {
    CreateKeyspaceStatement ks;
    TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&ks.if_not_exists));
    TESSERA_RETURN_IF_ERROR(Identifier(&ks.name, "a keyspace name"));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("with"));
    TESSERA_RETURN_IF_ERROR(ParseProperties(&ks.properties));
    *out = std::move(ks);
    return Status::OK();
  }
  if (AcceptKeyword("sequence")) {
    CreateSequenceStatement seq;
    TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&seq.if_not_exists));
    TESSERA_RETURN_IF_ERROR(QualifiedTableName(&seq.name));
    if (AcceptKeyword("with")) TESSERA_RETURN_IF_ERROR(ParseProperties(&seq.properties));
    *out = std::move(seq);
    return Status::OK();
  }
  if (AcceptKeyword("type")) {
    CreateTypeStatement type;
    TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&type.if_not_exists));
    TESSERA_RETURN_IF_ERROR(QualifiedTableName(&type.name));
    TESSERA_RETURN_IF_ERROR(ExpectPunct("("));
    do {
      std::pair<std::string, std::string> field;
      TESSERA_RETURN_IF_ERROR(Identifier(&field.first, "a field name"));
      TESSERA_RETURN_IF_ERROR(TypeText(&field.second));
      type.fields.push_back(std::move(field));
    } while (AcceptPunct(","));
    TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
    *out = std::move(type);
    return Status::OK();
  }
  if (AtKeyword("index") || (AtKeyword("custom") && AtKeyword("index", 1))) return ParseCreateIndex(out);
  if (AtKeyword("materialized")) return ParseCreateView(out);
  if (!AtTableWord(*this)) return Unexpected("KEYSPACE, TABLE, TYPE, INDEX, MATERIALIZED VIEW or SEQUENCE");
  Next();
  CreateTableStatement t;
  TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&t.if_not_exists));
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&t.table));
  TESSERA_RETURN_IF_ERROR(ExpectPunct("("));
  do {
    // Cassandra's cfamDefinition, '(' cfamColumns (',' cfamColumns?)* ')',
    // takes a trailing comma (and an empty element) in the list.
    if (!t.columns.empty() && (AtPunct(")") || AtPunct(","))) continue;
    if (AtKeyword("primary") && AtKeyword("key", 1)) {
      Next();
      Next();
      TESSERA_RETURN_IF_ERROR(ParsePrimaryKeyColumns(&t.partition_key, &t.clustering));
      continue;
    }
    ColumnDeclaration col;
    col.position = Peek().position;
    TESSERA_RETURN_IF_ERROR(Identifier(&col.name, "a column name"));
    TESSERA_RETURN_IF_ERROR(TypeText(&col.type));
    if (AcceptKeyword("static")) col.is_static = true;
    if (AtKeyword("primary")) {
      Next();
      TESSERA_RETURN_IF_ERROR(ExpectKeyword("key"));
      col.primary_key = true;
      t.partition_key.push_back(col.name);
    }
    t.columns.push_back(std::move(col));
  } while (AcceptPunct(","));
  TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  if (AcceptKeyword("with")) {
    TESSERA_RETURN_IF_ERROR(ParseTableWith(&t.clustering_order, &t.compact_storage, &t.properties));
  }
  *out = std::move(t);
  return Status::OK();
}

// After PRIMARY KEY: ((a, b), c, d) or (a, c, d).
Status ParserCore::ParsePrimaryKeyColumns(std::vector<std::string>* partition_key, std::vector<std::string>* clustering) {
  TESSERA_RETURN_IF_ERROR(ExpectPunct("("));
  if (AcceptPunct("(")) {  // ((a, b), c)
    do {
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a partition key column"));
      partition_key->push_back(c);
    } while (AcceptPunct(","));
    TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  } else {
    std::string c;
    TESSERA_RETURN_IF_ERROR(Identifier(&c, "a partition key column"));
    partition_key->push_back(c);
  }
  while (AcceptPunct(",")) {
    std::string c;
    TESSERA_RETURN_IF_ERROR(Identifier(&c, "a clustering column"));
    clustering->push_back(c);
  }
  return ExpectPunct(")");
}

// After WITH of CREATE TABLE or CREATE MATERIALIZED VIEW: CLUSTERING ORDER BY
// (...), COMPACT STORAGE and name = value properties, joined by AND.
Status ParserCore::ParseTableWith(std::vector<std::pair<std::string, bool>>* clustering_order, bool* compact_storage,
                                  std::vector<Property>* properties) {
  do {
    if (AtKeyword("clustering") && AtKeyword("order", 1)) {
      Next();
      Next();
      TESSERA_RETURN_IF_ERROR(ExpectKeyword("by"));
      TESSERA_RETURN_IF_ERROR(ExpectPunct("("));
      do {
        std::string c;
        TESSERA_RETURN_IF_ERROR(Identifier(&c, "a clustering column"));
        bool desc = false;
        if (AcceptKeyword("desc")) desc = true;
        else if (!AcceptKeyword("asc")) return Unexpected("ASC or DESC");
        clustering_order->emplace_back(c, desc);
      } while (AcceptPunct(","));
      TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
    } else if (AtKeyword("compact") && AtKeyword("storage", 1)) {
      Next();
      Next();
      *compact_storage = true;
    } else {
      Property p;
      const Token& name = Peek();
      if (name.kind != TokenKind::kIdentifier && name.kind != TokenKind::kQuotedIdentifier) {
        return Unexpected("a table property");
      }
      p.name = Next().text;
      TESSERA_RETURN_IF_ERROR(ExpectPunct("="));
      if (Peek().kind == TokenKind::kIdentifier && !AtKeyword("true") && !AtKeyword("false")) {
        p.value.kind = Term::Kind::kString;
        p.value.position = Peek().position;
        p.value.text = Next().text;
      } else {
        TESSERA_RETURN_IF_ERROR(ParseTerm(&p.value));
      }
      properties->push_back(std::move(p));
    }
  } while (AcceptKeyword("and"));
  return Status::OK();
}

// After CREATE: MATERIALIZED VIEW [IF NOT EXISTS] [ks.]view AS SELECT
// (* | col, ...) FROM [ks.]base WHERE col IS NOT NULL [AND ...] PRIMARY KEY
// (...) [WITH ...] (Cassandra 4.1's createMaterializedViewStatement; only
// IS NOT NULL restrictions).
Status ParserCore::ParseCreateView(RawStatement* out) {
  CreateViewStatement v;
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("materialized"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("view"));
  TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&v.if_not_exists));
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&v.view));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("as"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("select"));
  if (!AcceptPunct("*")) {
    do {
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a column name"));
      if (AtKeyword("as")) return Status::InvalidArgument("Cannot use aliases when defining a materialized view (got " + c + " AS ...)");
      if (AtPunct("(")) return Status::InvalidArgument("Can only select columns by name when defining a materialized view (got " + c + "(...))");
      v.columns.push_back(std::move(c));
    } while (AcceptPunct(","));
  }
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("from"));
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&v.base));
  if (AcceptKeyword("where")) {
    do {
      const SourcePosition at = Peek().position;
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a column name"));
      if (!(AtKeyword("is") && AtKeyword("not", 1) && AtKeyword("null", 2))) {
        return Status::InvalidArgument("line " + std::to_string(at.line) + ":" + std::to_string(at.column) +
                                       " materialized views take only IS NOT NULL restrictions (got a restriction of " +
                                       c + ")");
      }
      Next();
      Next();
      Next();
      v.not_null.push_back(std::move(c));
    } while (AcceptKeyword("and"));
  }
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("primary"));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("key"));
  TESSERA_RETURN_IF_ERROR(ParsePrimaryKeyColumns(&v.partition_key, &v.clustering));
  if (AcceptKeyword("with")) {
    bool compact = false;
    TESSERA_RETURN_IF_ERROR(ParseTableWith(&v.clustering_order, &compact, &v.properties));
    if (compact) return Status::InvalidArgument("COMPACT STORAGE is not supported on materialized views");
  }
  *out = std::move(v);
  return Status::OK();
}

Status ParserCore::ParseAlter(RawStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("alter"));
  if (AcceptKeyword("keyspace") || AcceptKeyword("schema")) {
    AlterKeyspaceStatement ks;
    TESSERA_RETURN_IF_ERROR(Identifier(&ks.name, "a keyspace name"));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("with"));
    TESSERA_RETURN_IF_ERROR(ParseProperties(&ks.properties));
    *out = std::move(ks);
    return Status::OK();
  }
  if (AcceptKeyword("type")) return ParseAlterType(out);
  if (AcceptKeyword("materialized")) {  // ALTER MATERIALIZED VIEW v WITH ...
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("view"));
    AlterTableStatement t;
    t.materialized_view = true;
    TESSERA_RETURN_IF_ERROR(QualifiedTableName(&t.table));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("with"));
    t.op = AlterTableStatement::Op::kWith;
    TESSERA_RETURN_IF_ERROR(ParseProperties(&t.properties));
    *out = std::move(t);
    return Status::OK();
  }
  if (!AtTableWord(*this)) return Unexpected("KEYSPACE, TABLE, MATERIALIZED VIEW or TYPE");
  Next();
  AlterTableStatement t;
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&t.table));
  if (AcceptKeyword("add")) {
    t.op = AlterTableStatement::Op::kAdd;
    bool parens = AcceptPunct("(");
    do {
      ColumnDeclaration col;
      col.position = Peek().position;
      TESSERA_RETURN_IF_ERROR(Identifier(&col.name, "a column name"));
      TESSERA_RETURN_IF_ERROR(TypeText(&col.type));
      if (AcceptKeyword("static")) col.is_static = true;
      t.added.push_back(std::move(col));
    } while (parens && AcceptPunct(","));
    if (parens) TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  } else if (AcceptKeyword("drop")) {
    t.op = AlterTableStatement::Op::kDrop;
    bool parens = AcceptPunct("(");
    do {
      std::string c;
      TESSERA_RETURN_IF_ERROR(Identifier(&c, "a column name"));
      t.dropped.push_back(c);
    } while (parens && AcceptPunct(","));
    if (parens) TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  } else if (AcceptKeyword("rename")) {
    t.op = AlterTableStatement::Op::kRename;
    do {
      std::string from, to;
      TESSERA_RETURN_IF_ERROR(Identifier(&from, "a column name"));
      TESSERA_RETURN_IF_ERROR(ExpectKeyword("to"));
      TESSERA_RETURN_IF_ERROR(Identifier(&to, "a column name"));
      t.renamed.emplace_back(from, to);
    } while (AcceptKeyword("and"));
  } else if (AcceptKeyword("with")) {
    t.op = AlterTableStatement::Op::kWith;
    TESSERA_RETURN_IF_ERROR(ParseProperties(&t.properties));
  } else {
    return Unexpected("ADD, DROP, RENAME or WITH");
  }
  *out = std::move(t);
  return Status::OK();
}

Status ParserCore::ParseAlterType(RawStatement* out) {
  AlterTypeStatement t;
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&t.name));
  if (AcceptKeyword("add")) {
    t.op = AlterTypeStatement::Op::kAdd;
    TESSERA_RETURN_IF_ERROR(Identifier(&t.added.first, "a field name"));
    TESSERA_RETURN_IF_ERROR(TypeText(&t.added.second));
  } else if (AcceptKeyword("rename")) {
    t.op = AlterTypeStatement::Op::kRename;
    do {
      std::string from, to;
      TESSERA_RETURN_IF_ERROR(Identifier(&from, "a field name"));
      TESSERA_RETURN_IF_ERROR(ExpectKeyword("to"));
      TESSERA_RETURN_IF_ERROR(Identifier(&to, "a field name"));
      t.renamed.emplace_back(from, to);
    } while (AcceptKeyword("and"));
  } else if (AcceptKeyword("alter")) {
    t.op = AlterTypeStatement::Op::kAlterField;
    std::string field, type;
    TESSERA_RETURN_IF_ERROR(Identifier(&field, "a field name"));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("type"));
    TESSERA_RETURN_IF_ERROR(TypeText(&type));
  } else {
    return Unexpected("ADD, RENAME or ALTER");
  }
  *out = std::move(t);
  return Status::OK();
}

// After CREATE: [CUSTOM] INDEX [IF NOT EXISTS] [name] ON [ks.]table (target)
// [USING 'class' [WITH OPTIONS = {...}]].
Status ParserCore::ParseCreateIndex(RawStatement* out) {
  CreateIndexStatement idx;
  const bool custom = AcceptKeyword("custom");
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("index"));
  TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&idx.if_not_exists));
  if (!AtKeyword("on")) {
    QualifiedName name;  // [ks.]name: the keyspace must be the table's (checked by the executor)
    TESSERA_RETURN_IF_ERROR(QualifiedTableName(&name));
    idx.name = name.name;
    idx.name_keyspace = name.keyspace;
  }
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("on"));
  TESSERA_RETURN_IF_ERROR(QualifiedTableName(&idx.table));
  TESSERA_RETURN_IF_ERROR(ExpectPunct("("));
  static constexpr std::pair<const char*, CreateIndexStatement::Target> kTargets[] = {
      {"keys", CreateIndexStatement::Target::kKeys},
      {"values", CreateIndexStatement::Target::kValues},
      {"entries", CreateIndexStatement::Target::kEntries},
      {"full", CreateIndexStatement::Target::kFull}};
  bool wrapped = false;
  for (const auto& [word, target] : kTargets) {
    if (AtKeyword(word) && AtPunct("(", 1)) {
      Next();
      Next();
      idx.target = target;
      wrapped = true;
      break;
    }
  }
  TESSERA_RETURN_IF_ERROR(Identifier(&idx.column, "a column name"));
  if (wrapped) TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  TESSERA_RETURN_IF_ERROR(ExpectPunct(")"));
  if (AcceptKeyword("using")) {
    if (Peek().kind != TokenKind::kString) return Unexpected("an index class name as a string");
    idx.custom_class = Next().text;
    if (AcceptKeyword("with")) TESSERA_RETURN_IF_ERROR(ParseProperties(&idx.properties));
  } else if (custom) {
    return Status::InvalidArgument("Must specify index implementation via USING");
  }
  *out = std::move(idx);
  return Status::OK();
}

Status ParserCore::ParseDrop(DropStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("drop"));
  if (AcceptKeyword("keyspace") || AcceptKeyword("schema")) {
    out->target = DropStatement::Target::kKeyspace;
  } else if (AtTableWord(*this)) {
    Next();
    out->target = DropStatement::Target::kTable;
  } else if (AcceptKeyword("sequence")) {
    out->target = DropStatement::Target::kSequence;
  } else if (AcceptKeyword("type")) {
    out->target = DropStatement::Target::kType;
  } else if (AcceptKeyword("index")) {
    out->target = DropStatement::Target::kIndex;
  } else if (AcceptKeyword("materialized")) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("view"));
    out->target = DropStatement::Target::kView;
  } else {
    return Unexpected("KEYSPACE, TABLE, TYPE, INDEX, MATERIALIZED VIEW or SEQUENCE");
  }
  if (AcceptKeyword("if")) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("exists"));
    out->if_exists = true;
  }
  if (out->target == DropStatement::Target::kKeyspace) return Identifier(&out->name.name, "a keyspace name");
  return QualifiedTableName(&out->name);
}

Status ParserCore::ParseDescribe(DescribeStatement* out) {
  if (!AcceptKeyword("describe")) TESSERA_RETURN_IF_ERROR(ExpectKeyword("desc"));
  using T = DescribeStatement::Target;
  auto at_end = [&] { return Peek().kind == TokenKind::kEnd || AtPunct(";"); };
  if (AcceptKeyword("full")) {
    out->full = true;
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("schema"));
    out->target = T::kSchema;
    return Status::OK();
  }
  if (AtKeyword("schema") && (Peek(1).kind == TokenKind::kEnd || AtPunct(";", 1))) {
    Next();
    out->target = T::kSchema;
    return Status::OK();
  }
  static constexpr std::pair<const char*, T> kLists[] = {
      {"keyspaces", T::kKeyspaces}, {"tables", T::kTables}, {"columnfamilies", T::kTables}, {"types", T::kTypes},
      {"functions", T::kFunctions}, {"aggregates", T::kAggregates}};
  for (const auto& [word, target] : kLists) {
    if (AtKeyword(word) && (Peek(1).kind == TokenKind::kEnd || AtPunct(";", 1))) {
      Next();
      out->target = target;
      return Status::OK();
    }
  }
  if (AtKeyword("only") && AtKeyword("keyspace", 1)) {
    Next();
    out->only = true;
  }
  if (AtKeyword("keyspace") && !AtPunct(".", 1)) {  // DESCRIBE KEYSPACE [ks]
    Next();
    out->target = T::kKeyspace;
    if (!at_end()) TESSERA_RETURN_IF_ERROR(Identifier(&out->name.name, "a keyspace name"));
    return Status::OK();
  }
  if (AtKeyword("materialized") && AtKeyword("view", 1)) {  // DESCRIBE MATERIALIZED VIEW v
    Next();
    Next();
    out->target = T::kView;
    return QualifiedTableName(&out->name);
  }
  static constexpr std::pair<const char*, T> kObjects[] = {
      {"table", T::kTable}, {"columnfamily", T::kTable}, {"type", T::kType}, {"index", T::kIndex},
      {"function", T::kFunction}, {"aggregate", T::kAggregate}};
  for (const auto& [word, target] : kObjects) {
    if (AtKeyword(word) && Peek(1).kind != TokenKind::kEnd && !AtPunct(".", 1) && !AtPunct(";", 1)) {
      Next();
      out->target = target;
      return QualifiedTableName(&out->name);
    }
  }
  out->target = T::kName;
  return QualifiedTableName(&out->name);
}

Status ParserCore::ParseTruncate(TruncateStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("truncate"));
  if (AtTableWord(*this)) Next();
  return QualifiedTableName(&out->table);
}

Status ParserCore::ParseUse(UseStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("use"));
  return Identifier(&out->keyspace, "a keyspace name");
}

}  // namespace tessera::cql::internal
