#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "common/bytes.h"
#include "cql/protocol/compression.h"
#include "cql/protocol/frame.h"
#include "cql/protocol/requests.h"
#include "cql/protocol/responses.h"

namespace tessera::cql {
namespace {

std::map<std::string, std::string> DriverFrames() {
  std::map<std::string, std::string> out;
  std::ifstream in(std::string(TESSERA_TEST_DATA_DIR) + "/driver_requests.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    std::string bytes;
    EXPECT_TRUE(FromHex(line.substr(tab + 1), &bytes));
    out[line.substr(0, tab)] = bytes;
  }
  return out;
}

// Parses a whole frame as the server does: header, then the body.
Request Decode(const std::string& frame, FrameHeader* h) {
  EXPECT_EQ(ParseFrameHeader(frame, h), HeaderCheck::kOk);
  EXPECT_EQ(frame.size(), kFrameHeaderSize + h->length);
  auto r = DecodeRequest(h->opcode, std::string_view(frame).substr(kFrameHeaderSize), kProtocolV4);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Request(OptionsRequest{});
}

// Frames encoded by the DataStax Python driver (tests/data/gen_driver_requests.py).
TEST(ProtocolTest, DecodesTheRequestsThePythonDriverSends) {
  auto frames = DriverFrames();
  ASSERT_EQ(frames.size(), 9u);
  FrameHeader h;
  auto startup = std::get<StartupRequest>(Decode(frames["startup"], &h));
  EXPECT_EQ(startup.options["CQL_VERSION"], "3.4.5");
  EXPECT_EQ(startup.options["COMPRESSION"], "lz4");
  EXPECT_EQ(h.stream, 1);
  auto reg = std::get<RegisterRequest>(Decode(frames["register"], &h));
  EXPECT_EQ(reg.event_types, (std::vector<std::string>{"TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"}));
  auto q = std::get<QueryRequest>(Decode(frames["query_paged"], &h));
  EXPECT_EQ(q.query, "SELECT * FROM system.local WHERE key='local'");
  EXPECT_EQ(q.params.page_size, 5000);
  EXPECT_EQ(q.params.default_timestamp, 1700000000000000);
  auto qv = std::get<QueryRequest>(Decode(frames["query_values"], &h));
  EXPECT_EQ(h.stream, 300);
  EXPECT_EQ(qv.params.consistency, Consistency::kLocalQuorum);
  ASSERT_EQ(qv.params.values.size(), 2u);
  EXPECT_EQ(qv.params.values[0], WireValue::Of(std::string("\x00\x00\x00\x07", 4)));
  EXPECT_EQ(qv.params.values[1].kind, WireValue::Kind::kNull);
  EXPECT_EQ(qv.params.paging_state, std::string("\x01\x02\x03"));
  EXPECT_EQ(std::get<PrepareRequest>(Decode(frames["prepare"], &h)).query, "SELECT v FROM ks.t WHERE k = ?");
  auto e = std::get<ExecuteRequest>(Decode(frames["execute"], &h));
  EXPECT_EQ(e.id, "\xaa\xbb\xcc");
  EXPECT_EQ(e.params.consistency, Consistency::kQuorum);
  EXPECT_EQ(e.params.page_size, 10);
  auto b = std::get<BatchRequest>(Decode(frames["batch"], &h));
  EXPECT_EQ(h.stream, 32767);
  EXPECT_EQ(b.type, BatchRequest::kUnlogged);
  ASSERT_EQ(b.statements.size(), 2u);
  EXPECT_FALSE(b.statements[0].prepared);
  EXPECT_TRUE(b.statements[1].prepared);
  EXPECT_EQ(b.statements[1].values.size(), 2u);
  EXPECT_EQ(b.default_timestamp, 7);
  auto a = std::get<AuthResponseRequest>(Decode(frames["auth_response"], &h));
  EXPECT_EQ(a.token, std::string("\0cassandra\0cassandra", 20));
  std::get<OptionsRequest>(Decode(frames["options"], &h));
}

TEST(ProtocolTest, EveryTruncationOrCorruptionIsAnErrorNeverACrash) {
  std::mt19937 rng(5);
  for (const auto& [name, frame] : DriverFrames()) {
    FrameHeader h;
    ASSERT_EQ(ParseFrameHeader(frame, &h), HeaderCheck::kOk);
    std::string body = frame.substr(kFrameHeaderSize);
    for (size_t cut = 0; cut < body.size(); ++cut) {
      auto r = DecodeRequest(h.opcode, body.substr(0, cut), kProtocolV4);
      if (name != "options") {
        EXPECT_FALSE(r.ok()) << name << " cut at " << cut;
        if (!r.ok()) {
          EXPECT_NE(r.status().message().find("at byte"), std::string::npos) << r.status().message();
        }
      }
    }
    if (name != "options") {
      EXPECT_FALSE(DecodeRequest(h.opcode, body + "x", kProtocolV4).ok()) << name;
    }
    for (int i = 0; i < 200; ++i) {
      std::string damaged = body;
      if (damaged.empty()) break;
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
      (void)DecodeRequest(h.opcode, damaged, kProtocolV4);
    }
  }
  EXPECT_FALSE(DecodeRequest(0x08, "", kProtocolV4).ok());  // RESULT is not a request
  EXPECT_FALSE(DecodeRequest(0x7f, "", kProtocolV4).ok());
}

TEST(ProtocolTest, HeaderChecksVersionAndSize) {
  FrameHeader h;
  EXPECT_EQ(ParseFrameHeader(std::string("\x04\x00\x00", 3), &h), HeaderCheck::kNeedMore);
  // The drivers' first attempt: version 0x42 (DSE v2) on stream 0x0102.
  EXPECT_EQ(ParseFrameHeader(std::string("\x42\x00\x01\x02\x05\x00\x00\x00\x00", 9), &h), HeaderCheck::kBadVersion);
  EXPECT_EQ(h.stream, 0x0102);
  EXPECT_EQ(ParseFrameHeader(std::string("\x05\x00\x00\x00\x05\x00\x00\x00\x00", 9), &h), HeaderCheck::kOk);
  EXPECT_EQ(h.version, kProtocolV5);
  EXPECT_EQ(ParseFrameHeader(std::string("\x06\x00\x00\x00\x05\x00\x00\x00\x00", 9), &h), HeaderCheck::kBadVersion);
  EXPECT_EQ(ParseFrameHeader(std::string("\x84\x00\x00\x00\x05\x00\x00\x00\x00", 9), &h), HeaderCheck::kBadVersion);
  EXPECT_EQ(ParseFrameHeader(std::string("\x04\x00\x00\x00\x05\x7f\xff\xff\xff", 9), &h), HeaderCheck::kTooLarge);
  std::string out;
  EncodeResponseHeader(kProtocolV4, kFlagWarning, -1, Opcode::kEvent, 3, &out);
  EXPECT_EQ(ToHex(out), "8408ffff0c00000003");
}

TEST(ProtocolTest, Lz4AndSnappyRoundTripAndRejectCorruption) {
  std::string body;
  for (int i = 0; i < 5000; ++i) body += "row-" + std::to_string(i % 97) + ";";
  for (Compression c : {Compression::kLz4, Compression::kSnappy}) {
    std::string packed, unpacked;
    ASSERT_TRUE(Compress(c, body, &packed).ok());
    EXPECT_LT(packed.size(), body.size() / 2);
    ASSERT_TRUE(Decompress(c, packed, kMaxFrameBodySize, &unpacked).ok());
    EXPECT_EQ(unpacked, body);
    EXPECT_FALSE(Decompress(c, packed, body.size() - 1, &unpacked).ok());  // over the limit
    std::string broken = packed.substr(0, packed.size() / 2);
    EXPECT_FALSE(Decompress(c, broken, kMaxFrameBodySize, &unpacked).ok());
    std::string empty;
    ASSERT_TRUE(Compress(c, "", &packed).ok());
    ASSERT_TRUE(Decompress(c, packed, 10, &empty).ok());
    EXPECT_TRUE(empty.empty());
  }
  EXPECT_EQ(*ParseCompression("LZ4"), Compression::kLz4);
  EXPECT_FALSE(ParseCompression("zstd").ok());
  std::string out;
  EXPECT_FALSE(Decompress(Compression::kLz4, std::string("\x7f\xff\xff\xff", 4), kMaxFrameBodySize, &out).ok());
}

TEST(ProtocolTest, ResponseLayoutsFollowTheSpec) {
  ErrorResponse exists{ErrorCode::kAlreadyExists, "Table ks.t already exists", "ks", "t"};
  EXPECT_EQ(ToHex(EncodeError(exists)).substr(0, 8), "00002400");
  EXPECT_EQ(EncodeError(exists).substr(4 + 2 + exists.message.size()), std::string("\x00\x02ks\x00\x01t", 7));
  ErrorResponse unprepared{ErrorCode::kUnprepared, "Prepared query with ID abc not found"};
  unprepared.unprepared_id = "\xab\xcd";
  std::string u = EncodeError(unprepared);
  EXPECT_EQ(u.substr(u.size() - 4), std::string("\x00\x02\xab\xcd", 4));

  WireWriter w;
  EncodeTypeOption(*CqlType::Parse("frozen<map<text, list<int>>>"), &w);
  EXPECT_EQ(ToHex(w.data()), "0021" "000d" "0020" "0009");
  WireWriter t;
  EncodeTypeOption(*CqlType::Parse("tuple<int, text>"), &t);
  EXPECT_EQ(ToHex(t.data()), "0031" "0002" "0009" "000d");

  std::vector<ColumnSpec> cols = {{"ks", "t", "k", CqlType::Scalar(TypeKind::kInt)},
                                  {"ks", "t", "v", CqlType::Scalar(TypeKind::kText)}};
  RowsWriter rows(cols, std::string("\x09", 1), false);
  rows.AddRow({std::string("\x00\x00\x00\x01", 4), std::nullopt});
  std::string body = rows.Finish();
  // kind 2, flags global|has_more, 2 columns, paging state, global spec, 2 col specs, 1 row.
  EXPECT_EQ(ToHex(body.substr(0, 17)), "00000002" "00000003" "00000002" "00000001" "09");
  EXPECT_EQ(ToHex(body.substr(body.size() - 16)), "00000001" "00000004" "00000001" "ffffffff");
}

}  // namespace
}  // namespace tessera::cql
