#include <gtest/gtest.h>

#include <sstream>

#include "shell/result_printer.h"
#include "shell/statement_splitter.h"
#include "types/serialization.h"
#include "types/value_format.h"

namespace tessera::shell {
namespace {

TEST(StatementSplitterTest, SplitsAtSemicolonsOutsideQuotesAndComments) {
  StatementSplitter s;
  EXPECT_TRUE(s.Feed("SELECT * FROM t WHERE a = 'x;y'").empty());
  EXPECT_TRUE(s.pending());
  auto done = s.Feed("  AND b = \"c;d\" -- a comment; not the end");
  EXPECT_TRUE(done.empty());
  done = s.Feed("; INSERT INTO t (k) VALUES ($$a;b$$); /* x; */ SELECT 1");
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], "SELECT * FROM t WHERE a = 'x;y'\n  AND b = \"c;d\"");
  EXPECT_EQ(done[1], "INSERT INTO t (k) VALUES ($$a;b$$)");
  EXPECT_TRUE(s.pending());
  EXPECT_EQ(s.TakePending(), "SELECT 1");
  EXPECT_FALSE(s.pending());
  // 'it''s' stays one string.
  done = s.Feed("INSERT INTO t (v) VALUES ('it''s;');");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0], "INSERT INTO t (v) VALUES ('it''s;')");
}

TEST(StatementSplitterTest, ShellCommandsEndAtTheirLine) {
  StatementSplitter s;
  auto done = s.Feed("describe keyspaces");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0], "describe keyspaces");
  EXPECT_EQ(s.Feed("EXIT;")[0], "EXIT");
  EXPECT_EQ(FirstWord("  desc table x"), "DESC");
  EXPECT_TRUE(s.Feed("SELECT").empty());
  EXPECT_TRUE(s.Feed("exit").empty());  // inside a statement, "exit" is just a word
}

TEST(FormatValueTest, ShowsValuesAsCqlshDoes) {
  auto fmt = [](const char* type, const Value& v) {
    CqlType t = *CqlType::Parse(type);
    std::string b;
    EXPECT_TRUE(Serialize(t, v, &b).ok()) << type;
    return FormatValue(t, b);
  };
  EXPECT_EQ(fmt("timestamp", Value::Int(1392388200000)), "2014-02-14 14:30:00.000000+0000");
  EXPECT_EQ(fmt("boolean", Value::Boolean(true)), "True");
  EXPECT_EQ(fmt("double", Value::Double(0.132)), "0.132");
  EXPECT_EQ(fmt("list<text>", Value::List({Value::Bytes("a"), Value::Bytes("it's")})), "['a', 'it''s']");
  EXPECT_EQ(fmt("map<int, boolean>", Value::Map({{Value::Int(1), Value::Boolean(false)}})), "{1: False}");
  EXPECT_EQ(fmt("blob", Value::Bytes("\xca\xfe")), "0xcafe");
  EXPECT_EQ(fmt("date", Value::Int((int64_t{1} << 31) + 16115)), "2014-02-14");
  EXPECT_EQ(FormatValue(CqlType::Scalar(TypeKind::kInt), "xx"), "0x7878");  // not an int: hex
}

TEST(ResultPrinterTest, AlignsColumnsAndRightAlignsNumbers) {
  std::vector<cql::ColumnSpec> cols = {{"ks", "t", "k", CqlType::Scalar(TypeKind::kInt)},
                                       {"ks", "t", "name", CqlType::Scalar(TypeKind::kText)}};
  cql::DecodedRows rows;
  std::string one, twelve;
  ASSERT_TRUE(Serialize(cols[0].type, Value::Int(1), &one).ok());
  ASSERT_TRUE(Serialize(cols[0].type, Value::Int(12), &twelve).ok());
  rows.rows = {{one, std::string("alice")}, {twelve, std::nullopt}};
  std::ostringstream out;
  PrintRows(cols, rows, false, 0, out);
  EXPECT_EQ(out.str(),
            "\n"
            "  k | name \n"
            "----+-------\n"
            "  1 | alice\n"
            " 12 | null \n");
  std::ostringstream expanded;
  PrintRows(cols, rows, true, 0, expanded);
  EXPECT_NE(expanded.str().find("@ Row 2\n"), std::string::npos);
  EXPECT_NE(expanded.str().find(" name | null\n"), std::string::npos);
}

}  // namespace
}  // namespace tessera::shell
