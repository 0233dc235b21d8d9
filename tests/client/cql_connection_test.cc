// Tessera's client against a whole in-process node over loopback, and the
// client-side codecs against the server-side ones.
#include "client/cql_connection.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "cql/protocol/request_encoding.h"
#include "tests/server/test_node.h"
#include "types/serialization.h"

namespace tessera::client {
namespace {

class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClientOptions c;
    c.port = node_.port();
    auto conn = CqlConnection::Connect(c);
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    conn_ = std::move(conn).value();
  }
  void TearDown() override { conn_.reset(); }
  testing::TestNode node_{"client"};
  std::unique_ptr<CqlConnection> conn_;
};

std::string IntBytes(int32_t v) {
  std::string out;
  EXPECT_TRUE(Serialize(CqlType::Scalar(TypeKind::kInt), Value::Int(v), &out).ok());
  return out;
}

TEST(RequestEncodingTest, RoundTripsThroughTheServersDecoder) {
  cql::QueryParameters p;
  p.consistency = cql::Consistency::kLocalQuorum;
  p.values = {cql::WireValue::Of("abc"), cql::WireValue{}, cql::WireValue{cql::WireValue::Kind::kUnset, ""}};
  p.page_size = 100;
  p.paging_state = "state";
  p.default_timestamp = 42;
  auto encoded = cql::EncodeRequest(cql::ExecuteRequest{"id1", p});
  auto decoded = cql::DecodeRequest(static_cast<uint8_t>(encoded.opcode), encoded.body, cql::kProtocolV4);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const auto& e = std::get<cql::ExecuteRequest>(*decoded);
  EXPECT_EQ(e.id, "id1");
  EXPECT_EQ(e.params.consistency, cql::Consistency::kLocalQuorum);
  EXPECT_EQ(e.params.values, p.values);
  EXPECT_EQ(e.params.page_size, 100);
  EXPECT_EQ(e.params.paging_state, "state");
  EXPECT_EQ(e.params.default_timestamp, 42);
}

// Found by fuzz/response_decoder_fuzzer.cc: counts the body cannot hold
// were allocated before any byte was read.
TEST(ResponseDecodingTest, CountsLargerThanTheBodyAreMalformedNotAllocated) {
  auto rows = [](int32_t columns, int32_t count) {
    cql::WireWriter w;
    w.Int(2);                  // Rows
    w.Int(0x0004);             // No_metadata
    w.Int(columns);
    w.Int(count);
    return w.Take();
  };
  for (auto [columns, count] : {std::pair{1 << 30, 1}, std::pair{1, 1 << 30}, std::pair{0, 1 << 30}}) {
    auto r = cql::DecodeResponse(static_cast<uint8_t>(cql::Opcode::kResult), 0, rows(columns, count));
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption) << columns << " x " << count;
  }
  auto empty = cql::DecodeResponse(static_cast<uint8_t>(cql::Opcode::kResult), 0, rows(3, 0));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->rows.rows.empty());
}

// An open-loop load generator waits for a response only until its next send
// is due (workload/runner.cc): nothing in flight, the wait times out; a
// request sent (and flushed by the wait), the wait sees its response coming.
TEST_F(NodeTest, WaitForResponseTimesOutWhenNothingComesAndSeesAResponse) {
  auto idle = conn_->WaitForResponse(2'000);
  ASSERT_TRUE(idle.ok()) << idle.status().ToString();
  EXPECT_FALSE(*idle);
  auto stream = conn_->Send(cql::QueryRequest{"SELECT release_version FROM system.local", {}});
  ASSERT_TRUE(stream.ok());
  bool ready = false;
  for (int i = 0; i < 100 && !ready; ++i) {  // up to 100 x 100 ms: the request is flushed by the first wait
    auto r = conn_->WaitForResponse(100'000);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ready = *r;
  }
  ASSERT_TRUE(ready);
  auto response = conn_->Receive();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->stream, *stream);
  EXPECT_FALSE(response->decoded.is_error());
}

TEST_F(NodeTest, PipelinedPreparedWritesAndPagedReads) {
  ASSERT_TRUE(conn_->Query("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").ok());
  ASSERT_TRUE(conn_->Query("CREATE TABLE ks.t (p int, c int, v text, PRIMARY KEY (p, c))").ok());
  auto insert = conn_->Prepare("INSERT INTO ks.t (p, c, v) VALUES (?, ?, ?)");
  ASSERT_TRUE(insert.ok()) << insert.status().ToString();
  EXPECT_EQ(insert->partition_key_indexes, std::vector<uint16_t>{0});
  ASSERT_EQ(insert->bind_columns.size(), 3u);
  EXPECT_EQ(insert->bind_columns[2].type.kind(), TypeKind::kText);
  // 500 inserts with up to 64 in flight on one connection.
  int sent = 0, answered = 0;
  while (answered < 500) {
    while (sent < 500 && conn_->in_flight() < 64) {
      cql::QueryParameters p;
      p.values = {cql::WireValue::Of(IntBytes(sent % 5)), cql::WireValue::Of(IntBytes(sent)),
                  cql::WireValue::Of("v" + std::to_string(sent))};
      ASSERT_TRUE(conn_->Send(cql::ExecuteRequest{insert->id, p}).ok());
      ++sent;
    }
    auto r = conn_->Receive();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->decoded.is_error()) << r->decoded.error_message;
    ++answered;
  }
  EXPECT_EQ(conn_->in_flight(), 0u);
  // Page through all 500 rows, 64 at a time.
  size_t rows = 0, pages = 0;
  std::optional<std::string> state;
  do {
    cql::QueryParameters p;
    p.page_size = 64;
    p.paging_state = state;
    auto page = conn_->Query("SELECT p, c, v FROM ks.t", p);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ASSERT_EQ(page->rows.columns.size(), 3u);
    EXPECT_EQ(page->rows.columns[0].name, "p");
    rows += page->rows.rows.size();
    state = page->rows.paging_state;
    ++pages;
  } while (state && pages < 100);
  EXPECT_EQ(rows, 500u);
  EXPECT_EQ(pages, 8u);
}

// Issue 12: a statement prepared on a table that was dropped and re-created
// with other types must not bind the old types' values into the new columns.
// The server answers Unprepared (0x2500) and the client prepares again.
TEST_F(NodeTest, AStatementPreparedOnADroppedTableIsUnpreparedAfterTheTableIsRecreated) {
  ASSERT_TRUE(conn_->Query("CREATE KEYSPACE d WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").ok());
  ASSERT_TRUE(conn_->Query("CREATE TABLE d.t (k int PRIMARY KEY, v int)").ok());
  auto insert = conn_->Prepare("INSERT INTO d.t (k, v) VALUES (?, ?)");
  ASSERT_TRUE(insert.ok());
  cql::QueryParameters p;
  p.values = {cql::WireValue::Of(IntBytes(1)), cql::WireValue::Of(IntBytes(2))};
  auto ok = conn_->Call(cql::ExecuteRequest{insert->id, p});
  ASSERT_TRUE(ok.ok() && !ok->is_error());
  ASSERT_TRUE(conn_->Query("DROP TABLE d.t").ok());
  ASSERT_TRUE(conn_->Query("CREATE TABLE d.t (k text PRIMARY KEY, v text)").ok());
  auto stale = conn_->Call(cql::ExecuteRequest{insert->id, p});
  ASSERT_TRUE(stale.ok());
  ASSERT_TRUE(stale->is_error());
  EXPECT_EQ(stale->error_code, 0x2500) << stale->error_message;
  auto rows = conn_->Query("SELECT * FROM d.t");
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->rows.rows.empty());  // nothing was written with the old types
  // Prepared again, the statement carries the new types.
  auto again = conn_->Prepare("INSERT INTO d.t (k, v) VALUES (?, ?)");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->bind_columns[0].type.kind(), TypeKind::kText);
  // A statement on an unchanged table stays prepared.
  ASSERT_TRUE(conn_->Query("CREATE TABLE d.u (k int PRIMARY KEY)").ok());
  auto read = conn_->Prepare("SELECT k FROM d.u WHERE k = ?");
  ASSERT_TRUE(read.ok());
  cql::QueryParameters q;
  q.values = {cql::WireValue::Of(IntBytes(1))};
  auto r = conn_->Call(cql::ExecuteRequest{read->id, q});
  ASSERT_TRUE(r.ok() && !r->is_error()) << (r.ok() ? r->error_message : r.status().ToString());
}

// Found by the executor fuzzer: a table option whose string is not UTF-8
// was kept in the schema, and storing the schema as JSON threw, which took
// the whole server down. CQL text must be UTF-8: a SyntaxError at the byte,
// and the connection and the server go on.
TEST_F(NodeTest, TextThatIsNotUtf8IsASyntaxErrorAndTheServerGoesOn) {
  ASSERT_TRUE(conn_->Query("CREATE KEYSPACE u WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").ok());
  for (const std::string& cql : {std::string("CREATE TABLE u.r (k int PRIMARY KEY, v text) WITH listribution = 'r\xfb\xff\xff\xff'"),
                                std::string("CREATE TABLE u.r (k int PRIMARY KEY) WITH comment = '\xc3'"),
                                std::string("CREATE TABLE u.\"\xff\" (k int PRIMARY KEY)"),
                                std::string("INSERT INTO u.r (k) VALUES (1) -- \xed\xa0\x80")}) {
    auto r = conn_->Query(cql);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsSyntaxError()) << r.status().ToString();
    EXPECT_NE(r.status().ToString().find("invalid UTF-8"), std::string::npos) << r.status().ToString();
  }
  auto bad = conn_->Query("CREATE TABLE u.r (k int PRIMARY KEY, v text) WITH listribution = 'r\xfb'");
  EXPECT_NE(bad.status().ToString().find("line 1:68 invalid UTF-8 (byte 0xFB)"), std::string::npos)
      << bad.status().ToString();
  ASSERT_TRUE(conn_->Query("CREATE TABLE u.r (k int PRIMARY KEY, v text) WITH comment = 'caf\xc3\xa9'").ok());
  auto rows = conn_->Query("SELECT comment FROM system_schema.tables WHERE keyspace_name = 'u' AND table_name = 'r'");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->rows.rows.size(), 1u);
  EXPECT_EQ(*rows->rows.rows[0][0], "caf\xc3\xa9");
}

// Found by the executor fuzzer: a paging state whose cursor was altered
// resumed a range scan in another table's keys, decoded them with this
// table's schema and answered ServerError. The cursor comes from the client:
// one outside the range it was made for is an Invalid paging state.
TEST_F(NodeTest, AnAlteredPagingStateIsInvalidAndPagingGoesOn) {
  ASSERT_TRUE(conn_->Query("CREATE KEYSPACE pg WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").ok());
  ASSERT_TRUE(conn_->Query("CREATE TABLE pg.a (k int PRIMARY KEY, v int)").ok());
  ASSERT_TRUE(conn_->Query("CREATE TABLE pg.w (p int, c int, v int, PRIMARY KEY (p, c))").ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(conn_->Query("INSERT INTO pg.a (k, v) VALUES (" + std::to_string(i) + ", 1)").ok());
    ASSERT_TRUE(conn_->Query("INSERT INTO pg.w (p, c, v) VALUES (1, " + std::to_string(i) + ", 1)").ok());
  }
  for (const std::string query : {"SELECT * FROM pg.a", "SELECT * FROM pg.w WHERE p = 1"}) {
    cql::QueryParameters p;
    p.page_size = 3;
    auto first = conn_->Query(query, p);
    ASSERT_TRUE(first.ok() && first->rows.paging_state) << query;
    const std::string state = *first->rows.paging_state;
    // The same state with its cursor's table id (the 4 bytes after the cursor's header) changed,
    // cut short, and with its last byte flipped.
    std::vector<std::string> altered;
    for (size_t at = 0; at + 4 <= state.size(); ++at) {
      std::string s = state;
      s[at] = static_cast<char>(s[at] ^ 0x40);
      altered.push_back(s);
    }
    altered.push_back(state.substr(0, state.size() - 3));
    for (const auto& bad : altered) {
      p.paging_state = bad;
      auto r = conn_->Query(query, p);
      if (r.ok()) continue;  // a change that still names a position inside the range is a valid state
      EXPECT_EQ(r.status().ToString().find("0x0000"), std::string::npos) << r.status().ToString();
      EXPECT_NE(r.status().ToString().find("0x2200"), std::string::npos) << r.status().ToString();
    }
    p.paging_state = state;
    auto second = conn_->Query(query, p);
    ASSERT_TRUE(second.ok()) << second.status().ToString();
    EXPECT_EQ(second->rows.rows.size(), 3u);
  }
}

TEST_F(NodeTest, ServerErrorsCarryTheirCodeAndWarningsArrive) {
  auto bad = conn_->Query("SELEC * FROM x");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsSyntaxError());
  EXPECT_NE(bad.status().ToString().find("Error 0x2000 (Syntax error): line 1:1 no viable alternative"), std::string::npos)
      << bad.status().ToString();
  auto missing = conn_->Query("SELECT * FROM nope.nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().ToString().find("0x2200"), std::string::npos);
  ASSERT_TRUE(conn_->Query("CREATE KEYSPACE w WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").ok());
  ASSERT_TRUE(conn_->Query("CREATE TABLE w.t (k blob PRIMARY KEY)").ok());
  auto warned = conn_->Query("INSERT INTO w.t (k) VALUES (0x" + std::string(4000, 'a') + ")");
  ASSERT_TRUE(warned.ok());
  ASSERT_EQ(warned->warnings.size(), 1u);
  EXPECT_NE(warned->warnings[0].find("Primary key column k"), std::string::npos);
}

}  // namespace
}  // namespace tessera::client
