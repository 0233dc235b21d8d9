#include "cql/parser/parser.h"

#include <gtest/gtest.h>

#include <fstream>

#include "cql/parser/lexer.h"

namespace tessera::cql {
namespace {

struct Case {
  int line;
  bool ok;
  std::string error;
  std::string statement;
};

std::vector<Case> LoadCases() {
  std::ifstream in(std::string(TESSERA_TEST_SOURCE_DIR) + "/cql/parser_cases.test");
  std::vector<Case> cases;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("ok: ", 0) == 0) {
      cases.push_back({n, true, "", line.substr(4)});
    } else if (line.rfind("error ", 0) == 0) {
      size_t sep = line.find(": ", 6);
      cases.push_back({n, false, line.substr(6, sep - 6), line.substr(sep + 2)});
    } else if (!line.empty() && line[0] != '#' && !cases.empty()) {
      cases.back().statement += "\n" + line;  // a statement continued on the next line
    }
  }
  return cases;
}

TEST(ParserTest, DeclarativeCases) {
  auto cases = LoadCases();
  ASSERT_GE(cases.size(), 60u);
  for (const auto& c : cases) {
    auto r = ParseStatement(c.statement);
    if (c.ok) {
      EXPECT_TRUE(r.ok()) << "parser_cases.test:" << c.line << ": " << c.statement << "\n  " << r.status().ToString();
    } else {
      ASSERT_FALSE(r.ok()) << "parser_cases.test:" << c.line << " parsed but should not: " << c.statement;
      EXPECT_TRUE(r.status().IsSyntaxError()) << r.status().ToString();
      EXPECT_NE(r.status().message().find(c.error), std::string::npos)
          << "parser_cases.test:" << c.line << ": expected '" << c.error << "' in: " << r.status().message();
    }
  }
}

template <typename T>
T Parse(const std::string& cql) {
  auto r = ParseStatement(cql);
  EXPECT_TRUE(r.ok()) << cql << ": " << r.status().ToString();
  return std::get<T>(r->statement);
}

// Seed 000/003: the access log keyed by (host, time) with newest first.
TEST(ParserTest, CreateTableCollectsKeysOrderAndOptions) {
  auto t = Parse<CreateTableStatement>(
      "CREATE TABLE IF NOT EXISTS logs.access (host text, day date, ts timestamp, req_id timeuuid, "
      "path text, status int, tags set<text> STATIC, PRIMARY KEY ((host, day), ts, req_id)) "
      "WITH CLUSTERING ORDER BY (ts DESC, req_id ASC) AND comment = 'seed 000' AND default_time_to_live = 86400");
  EXPECT_TRUE(t.if_not_exists);
  EXPECT_EQ(t.table.keyspace, "logs");
  EXPECT_EQ(t.partition_key, (std::vector<std::string>{"host", "day"}));
  EXPECT_EQ(t.clustering, (std::vector<std::string>{"ts", "req_id"}));
  ASSERT_EQ(t.clustering_order.size(), 2u);
  EXPECT_TRUE(t.clustering_order[0].second);
  EXPECT_FALSE(t.clustering_order[1].second);
  ASSERT_EQ(t.columns.size(), 7u);
  EXPECT_EQ(t.columns[6].type, "set<text>");
  EXPECT_TRUE(t.columns[6].is_static);
  ASSERT_EQ(t.properties.size(), 2u);
  EXPECT_EQ(t.properties[1].name, "default_time_to_live");
  EXPECT_EQ(t.properties[1].value.text, "86400");
  auto inline_pk = Parse<CreateTableStatement>("CREATE TABLE t (id uuid PRIMARY KEY, m frozen<map<text, list<int>>>)");
  EXPECT_EQ(inline_pk.partition_key, std::vector<std::string>{"id"});
  EXPECT_EQ(inline_pk.columns[1].type, "frozen<map<text, list<int>>>");
}

TEST(ParserTest, SelectRelationsAndBindMarkers) {
  auto r = ParseStatement(
      "SELECT host, ts AS t, writetime(path) FROM logs.access WHERE host = ? AND day = :day "
      "AND (ts, req_id) > (?, ?) AND token(host, day) <= 100 AND status IN (200, 304) "
      "ORDER BY ts DESC PER PARTITION LIMIT 5 LIMIT 100 ALLOW FILTERING");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->bind_marker_count, 4);
  EXPECT_EQ(r->bind_marker_names, (std::vector<std::string>{"", "day", "", ""}));
  auto s = std::get<SelectStatement>(r->statement);
  ASSERT_EQ(s.selectors.size(), 3u);
  EXPECT_EQ(s.selectors[1].alias, "t");
  EXPECT_EQ(s.selectors[2].kind, Selector::Kind::kWritetime);
  ASSERT_EQ(s.where.size(), 5u);
  EXPECT_EQ(s.where[1].value.bind_index, 1);
  EXPECT_EQ(s.where[2].lhs, Relation::Lhs::kMultiColumn);
  EXPECT_EQ(s.where[2].op, Relation::Op::kGt);
  EXPECT_EQ(s.where[2].value.kind, Term::Kind::kTuple);
  EXPECT_EQ(s.where[3].lhs, Relation::Lhs::kToken);
  EXPECT_EQ(s.where[3].columns, (std::vector<std::string>{"host", "day"}));
  EXPECT_EQ(s.where[4].in_values.size(), 2u);
  EXPECT_EQ(s.order_by, (std::vector<std::pair<std::string, bool>>{{"ts", true}}));
  EXPECT_EQ(s.per_partition_limit->text, "5");
  EXPECT_TRUE(s.allow_filtering);
  EXPECT_EQ(s.where[0].position.column, 62);
}

TEST(ParserTest, UpdateAssignmentsAndLiterals) {
  auto u = Parse<UpdateStatement>(
      "UPDATE t USING TTL 5 AND TIMESTAMP 7 SET l = l + [1], l = ['a'] + l, s = s - {'x'}, m['k'] = -2.5, "
      "\"Mixed\" = 0x00ff, d = 1h30m WHERE k = 'it''s' IF v = null");
  EXPECT_EQ(u.using_clause.ttl->text, "5");
  EXPECT_EQ(u.using_clause.timestamp->text, "7");
  ASSERT_EQ(u.assignments.size(), 6u);
  EXPECT_EQ(u.assignments[0].op, Assignment::Op::kAppend);
  EXPECT_EQ(u.assignments[1].op, Assignment::Op::kPrepend);
  EXPECT_EQ(u.assignments[2].op, Assignment::Op::kRemove);
  EXPECT_EQ(u.assignments[3].op, Assignment::Op::kSetElement);
  EXPECT_EQ(u.assignments[3].value.text, "-2.5");
  EXPECT_EQ(u.assignments[4].column, "Mixed");
  EXPECT_EQ(u.assignments[4].value.kind, Term::Kind::kBlob);
  EXPECT_EQ(u.assignments[4].value.text, "00ff");
  EXPECT_EQ(u.assignments[5].value.kind, Term::Kind::kDuration);
  EXPECT_EQ(u.where[0].value.text, "it's");
  EXPECT_EQ(u.conditions[0].value.kind, Term::Kind::kNull);
}

// Issue 31: Cassandra's lexer takes an ISO 8601 duration only with an
// uppercase P and a complete designator, so metrics columns p50, p99, p2 and
// pt are identifiers.
TEST(ParserTest, IsoDurationsNeedAnUppercasePAndACompleteDesignator) {
  auto u = Parse<UpdateStatement>("UPDATE lat SET p50 = P1Y2M, p99 = PT3H, p2 = P2W, pt = P1DT2H30M4S WHERE k = 1");
  ASSERT_EQ(u.assignments.size(), 4u);
  EXPECT_EQ(u.assignments[0].column, "p50");
  EXPECT_EQ(u.assignments[1].column, "p99");
  EXPECT_EQ(u.assignments[2].column, "p2");
  EXPECT_EQ(u.assignments[3].column, "pt");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(u.assignments[i].value.kind, Term::Kind::kDuration) << i;
  for (const char* word : {"p50", "p1y", "P", "PT", "P1", "P1X", "P1W2D", "PT1Hx"}) {
    auto tokens = Tokenize(word);
    ASSERT_TRUE(tokens.ok()) << word;
    EXPECT_EQ((*tokens)[0].kind, TokenKind::kIdentifier) << word;
  }
}

TEST(ParserTest, KeywordsAreCaseInsensitiveAndQuotedNamesKeepCase) {
  auto s = Parse<SelectStatement>("sElEcT \"Key\", vAlUe FrOm \"KS\".\"Tab\" wHeRe \"Key\"='local'");
  EXPECT_EQ(s.selectors[0].name, "Key");
  EXPECT_EQ(s.selectors[1].name, "value");
  EXPECT_EQ(s.table.keyspace, "KS");
  EXPECT_EQ(s.table.name, "Tab");
  EXPECT_EQ(Parse<UseStatement>("USE \"MyKS\"").keyspace, "MyKS");
  auto bad = ParseStatement("SELECT * WHERE");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("input 'WHERE'"), std::string::npos) << bad.status().message();
}

TEST(ParserTest, BatchHoldsItsStatements) {
  auto b = Parse<BatchStatement>(
      "BEGIN UNLOGGED BATCH USING TIMESTAMP 3 INSERT INTO t (k, v) VALUES (1, 'a'); "
      "UPDATE t SET v = 'b' WHERE k = 2; DELETE FROM t WHERE k = 3; APPLY BATCH;");
  EXPECT_EQ(b.type, BatchStatement::Type::kUnlogged);
  EXPECT_EQ(b.using_clause.timestamp->text, "3");
  ASSERT_EQ(b.statements.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<DeleteStatement>(b.statements[2]));
}

}  // namespace
}  // namespace tessera::cql
