// The bulk loader against a whole in-process node: good rows load, bad rows
// go to the reject file with their line number and reason.
#include "loader/bulk_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/bytes.h"
#include "tests/server/test_node.h"
#include "types/serialization.h"

namespace tessera::loader {
namespace {

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client::ClientOptions c;
    c.port = node_.port();
    conn_ = std::move(client::CqlConnection::Connect(c)).value();
    ASSERT_TRUE(conn_->Query("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").ok());
    ASSERT_TRUE(conn_->Query("CREATE TABLE ks.events (id int, at timestamp, name text, score double, ok boolean, "
                             "PRIMARY KEY (id, at))").ok());
  }
  void TearDown() override { conn_.reset(); }
  std::string Write(const std::string& name, const std::string& text) {
    auto path = (node_.dir() / name).string();
    std::ofstream(path) << text;
    return path;
  }
  LoadOptions Options(const std::string& path) {
    LoadOptions o;
    o.client.port = node_.port();
    o.keyspace = "ks";
    o.table = "events";
    o.path = path;
    o.format = *FormatOfPath(path);
    o.connections = 2;
    o.inflight = 8;
    return o;
  }
  int64_t Count() {
    auto r = conn_->Query("SELECT count(*) FROM ks.events");
    EXPECT_TRUE(r.ok());
    return static_cast<int64_t>(GetBigEndian64(r->rows.rows[0][0]->data()));
  }
  std::vector<std::string> Rejects(const std::string& path) {
    std::ifstream in(path + ".rejects");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
  testing::TestNode node_{"loader"};
  std::unique_ptr<client::CqlConnection> conn_;
};

TEST_F(LoaderTest, CsvLoadsGoodRowsAndRejectsBadOnesWithLineAndReason) {
  std::ostringstream csv;
  csv << "id,at,name,score,ok\n";
  for (int i = 0; i < 200; ++i) csv << i << ",2024-01-0" << (1 + i % 9) << " 10:00:00," << "n" << i << "," << i * 0.5 << ",true\n";
  csv << "500,2024-01-01,\"quoted, with comma\",1.5,false\n";  // line 202: loads
  csv << "abc,2024-01-01,x,1,true\n";                          // line 203: bad int
  csv << "7,2024-01-01,x\n";                                   // line 204: too few fields
  csv << ",2024-01-01,x,1,true\n";                             // line 205: null key (server refuses)
  csv << "8,not-a-date,x,1,true\n";                            // line 206: bad timestamp
  csv << "9,2024-01-01,x,1,maybe\n";                           // line 207: bad boolean
  csv << "10,2024-01-01,\"multi\nline\",2,true\n";             // line 208-209: loads
  csv << "11,2024-01-01,\"never closed,1,true\n";               // line 210: unterminated
  const std::string path = Write("events.csv", csv.str());
  auto result = RunLoad(Options(path), {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->records, 208u);
  EXPECT_EQ(result->loaded, 202u);
  EXPECT_EQ(result->rejected, 6u);
  EXPECT_EQ(Count(), 202);
  auto rejects = Rejects(path);
  ASSERT_EQ(rejects.size(), 7u);  // header + 6
  EXPECT_EQ(rejects[0], "# line\treason\trecord");
  auto has = [&](const std::string& prefix, const std::string& reason) {
    for (const auto& l : rejects) {
      if (l.rfind(prefix + "\t", 0) == 0 && l.find(reason) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("203", "Invalid")) << rejects[1];
  EXPECT_TRUE(has("204", "expected 5 fields, found 3"));
  EXPECT_TRUE(has("205", "Error 0x2200 (Invalid)"));
  EXPECT_TRUE(has("206", "not-a-date"));
  EXPECT_TRUE(has("207", "Invalid boolean 'maybe' for ok"));
  EXPECT_TRUE(has("210", "unterminated quoted field"));
  auto row = conn_->Query("SELECT name FROM ks.events WHERE id = 10");
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(*row->rows.rows[0][0], "multi\nline");
}

TEST_F(LoaderTest, JsonLinesAndTsvWithMappingUnitsAndLineNumbers) {
  const std::string jsonl = Write("e.jsonl", "{\"id\": 1, \"at\": 1700000000000, \"name\": \"a\", \"score\": 2.5, \"ok\": true}\n"
                                             "{\"id\": 2, \"at\": \"2024-01-01 00:00:00\", \"name\": null}\n"
                                             "not json\n"
                                             "[1, 2]\n");
  auto r = RunLoad(Options(jsonl), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->loaded, 2u);
  EXPECT_EQ(r->rejected, 2u);
  auto rejects = Rejects(jsonl);
  ASSERT_EQ(rejects.size(), 3u);
  EXPECT_EQ(rejects[1].rfind("3\tnot valid JSON", 0), 0u);
  EXPECT_EQ(rejects[2].rfind("4\ta JSON line must be an object", 0), 0u);

  const std::string tsv = Write("log.tsv", "host\ttime\textra\nh1\t807256800\tx\nh2\t807256801\ty\n");
  LoadOptions o = Options(tsv);
  o.mapping = {{"id", "@line"}, {"at", "time"}, {"name", "host"}};
  o.timestamp_unit = TimestampUnit::kSeconds;
  auto t = RunLoad(o, {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->loaded, 2u);
  auto row = conn_->Query("SELECT at, name FROM ks.events WHERE id = 3");  // line 3 = h2
  ASSERT_TRUE(row.ok());
  ASSERT_EQ(row->rows.rows.size(), 1u);
  EXPECT_EQ(static_cast<int64_t>(GetBigEndian64(row->rows.rows[0][0]->data())), int64_t{807256801} * 1000);
  EXPECT_EQ(*row->rows.rows[0][1], "h2");
  // A mapping to a column the table lacks is a setup error, before anything loads.
  o.mapping = {{"nope", "time"}};
  EXPECT_TRUE(RunLoad(o, {}).status().IsInvalidArgument());
}

TEST(RetryDelayTest, FullJitterUnderAnExponentialCap) {
  EXPECT_EQ(RetryDelayMicros(1, 100, 5000, 0.999), 99);
  EXPECT_EQ(RetryDelayMicros(3, 100, 5000, 0.5), 200);   // cap 400
  EXPECT_EQ(RetryDelayMicros(10, 100, 5000, 0.5), 2500);  // cap 5000
  EXPECT_EQ(RetryDelayMicros(5, 100, 5000, 0.0), 0);
}

TEST(FieldConverterTest, ConvertsLikeCqlLiterals) {
  auto i = ConvertField("42", CqlType::Scalar(TypeKind::kInt), "c");
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(**i, std::string("\0\0\0\x2a", 4));
  EXPECT_FALSE(ConvertField("4294967296", CqlType::Scalar(TypeKind::kInt), "c").ok());
  EXPECT_FALSE(ConvertField("1.5", CqlType::Scalar(TypeKind::kBigint), "c").ok());
  EXPECT_FALSE(ConvertField("", CqlType::Scalar(TypeKind::kInt), "c")->has_value());    // null
  EXPECT_EQ(**ConvertField("", CqlType::Scalar(TypeKind::kText), "c"), "");             // empty text
  EXPECT_EQ(**ConvertField("0xCAFE", CqlType::Scalar(TypeKind::kBlob), "c"), "\xca\xfe");
  EXPECT_EQ(**ConvertField("YES", CqlType::Scalar(TypeKind::kBoolean), "c"), std::string(1, '\1'));
  EXPECT_TRUE(ConvertField("1,2", CqlType::List(CqlType::Scalar(TypeKind::kInt), false), "c").status().IsInvalidArgument());
}

}  // namespace
}  // namespace tessera::loader
