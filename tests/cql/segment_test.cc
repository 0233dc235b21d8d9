// Native protocol v5 framing (segment.h) and the v5 message changes in the
// request decoder and response encoder. The expected bytes of the frames
// were produced by the DataStax Python driver's own codec
// (cassandra/segment.py, driver 3.25), an implementation independent of ours.
#include <gtest/gtest.h>

#include "common/bytes.h"
#include "cql/protocol/frame.h"
#include "cql/protocol/requests.h"
#include "cql/protocol/responses.h"
#include "cql/protocol/segment.h"
#include "cql/protocol/wire.h"

namespace tessera::cql {
namespace {

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

TEST(SegmentTest, UncompressedFramesMatchThePythonDriversCodec) {
  // An OPTIONS envelope of v5 on stream 1.
  const std::string options = FromHex("050000010500000000");
  std::string out;
  EncodeSegments(options, /*lz4=*/false, &out);
  EXPECT_EQ(ToHex(out), "090002a4c8c1050000010500000000b5557486");
  out.clear();
  EncodeSegments("", false, &out);
  EXPECT_EQ(ToHex(out), "0000026a36c4d37e7744");
}

TEST(SegmentTest, LargeEnvelopeSpansFramesThatAreNotSelfContained) {
  const std::string big(200000, 'x');
  std::string out;
  EncodeSegments(big, false, &out);
  ASSERT_EQ(out.size(), 200020u);  // two frames, 10 bytes of header, CRC24 and CRC32 each
  EXPECT_EQ(ToHex(out.substr(0, 6)), "ffff013891fe");  // 131,071 bytes, not self-contained
  EXPECT_EQ(ToHex(out.substr(out.size() - 4)), "34e4d10d");
  // Decoded in pieces of any size, as reads split it.
  for (size_t piece : {1u, 7u, 4096u, 200020u}) {
    SegmentDecoder decoder(false);
    std::string raw, envelopes;
    for (size_t at = 0; at < out.size(); at += piece) {
      raw += out.substr(at, piece);
      ASSERT_TRUE(decoder.Decode(&raw, &envelopes).ok());
    }
    EXPECT_TRUE(raw.empty());
    EXPECT_EQ(envelopes, big) << piece;
  }
}

TEST(SegmentTest, Lz4FramesRoundTripCompressedOrStored) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "row-" + std::to_string(i % 97) + ";";  // compresses well
  std::string noise;
  uint32_t x = 12345;
  for (int i = 0; i < 3000; ++i) noise.push_back(static_cast<char>((x = x * 1103515245 + 12345) >> 16));
  for (const std::string* payload : {&text, &noise}) {
    std::string out;
    EncodeSegments(*payload, /*lz4=*/true, &out);
    if (payload == &text) {
      EXPECT_LT(out.size(), text.size() / 2);
    }
    SegmentDecoder decoder(true);
    std::string envelopes;
    ASSERT_TRUE(decoder.Decode(&out, &envelopes).ok());
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(envelopes, *payload);
  }
}

TEST(SegmentTest, ChecksumMismatchesAreErrors) {
  std::string good;
  EncodeSegments(FromHex("050000010500000000"), false, &good);
  for (size_t byte : {size_t{0}, size_t{4}, size_t{8}, good.size() - 1}) {
    std::string bad = good;
    bad[byte] = static_cast<char>(bad[byte] ^ 0x20);
    std::string envelopes;
    Status s = SegmentDecoder(false).Decode(&bad, &envelopes);
    EXPECT_FALSE(s.ok()) << byte;
    EXPECT_NE(s.message().find("CRC mismatch"), std::string::npos) << s.message();
    EXPECT_TRUE(envelopes.empty());
  }
}

TEST(ProtocolV5Test, QueryFlagsAreAnIntWithKeyspaceAndNow) {
  WireWriter w;
  w.LongString("SELECT * FROM t");
  w.Short(0x0004);                       // QUORUM
  w.Int(0x80 | 0x100 | 0x04);            // keyspace, now_in_seconds, page size
  w.Int(100);
  w.String("ks1");
  w.Int(1700000000);
  std::string body = w.Take();
  auto r = DecodeRequest(static_cast<uint8_t>(Opcode::kQuery), body, kProtocolV5);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& q = std::get<QueryRequest>(*r);
  EXPECT_EQ(q.params.keyspace, "ks1");
  EXPECT_EQ(q.params.now_in_seconds, 1700000000);
  EXPECT_EQ(q.params.page_size, 100);
  // The same body is malformed in v4 (a [byte] of flags, then stray bytes).
  EXPECT_FALSE(DecodeRequest(static_cast<uint8_t>(Opcode::kQuery), body, kProtocolV4).ok());
}

TEST(ProtocolV5Test, ExecuteCarriesTheResultMetadataIdAndPrepareAKeyspace) {
  WireWriter e;
  e.ShortBytes("ID");
  e.ShortBytes("META");
  e.Short(0x0001);
  e.Int(0);
  auto r = DecodeRequest(static_cast<uint8_t>(Opcode::kExecute), e.Take(), kProtocolV5);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(std::get<ExecuteRequest>(*r).id, "ID");
  EXPECT_EQ(std::get<ExecuteRequest>(*r).result_metadata_id, "META");
  WireWriter p;
  p.LongString("SELECT 1");
  p.Int(0x01);
  p.String("ks2");
  r = DecodeRequest(static_cast<uint8_t>(Opcode::kPrepare), p.Take(), kProtocolV5);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(std::get<PrepareRequest>(*r).keyspace, "ks2");
}

TEST(ProtocolV5Test, FailuresCarryAReasonMapAndCasTimeoutsTheirContentions) {
  ErrorResponse e{ErrorCode::kReadFailure, "too many tombstones"};
  e.consistency = Consistency::kOne;
  e.alive_or_blockfor = 1;
  e.failures = 1;
  e.reasons.push_back({std::string("\x7f\x00\x00\x01", 4), kReasonReadTooManyTombstones});
  const std::string v4 = EncodeError(e, kProtocolV4), v5 = EncodeError(e, kProtocolV5);
  // After code, message, consistency, received and blockfor: v4 [int] 1; v5 [int] 1, [inetaddr] 127.0.0.1, [short] 1.
  const size_t fixed = 4 + 2 + e.message.size() + 2 + 4 + 4;
  EXPECT_EQ(ToHex(v4.substr(fixed)), "0000000100");
  EXPECT_EQ(ToHex(v5.substr(fixed)), "00000001047f000001000100");
  ErrorResponse cas{ErrorCode::kWriteTimeout, "timed out"};
  cas.write_type = "CAS";
  cas.contentions = 3;
  EXPECT_EQ(EncodeError(cas, kProtocolV5).size(), EncodeError(cas, kProtocolV4).size() + 2);
  EXPECT_EQ(ToHex(EncodeError(cas, kProtocolV5).substr(EncodeError(cas, kProtocolV4).size())), "0003");
}

TEST(ProtocolV5Test, ChangedMetadataIsFlaggedWithTheNewId) {
  std::vector<ColumnSpec> cols{{"ks", "t", "k", CqlType::Scalar(TypeKind::kInt)}};
  RowsWriter rows(cols, std::string("PAGE"), /*no_metadata=*/false);
  rows.AddRow({std::string("\0\0\0\1", 4)});
  const std::string body = rows.Finish();
  const std::string changed = WithChangedMetadata(body, "NEWID");
  WireReader r(changed);
  int32_t kind = 0, flags = 0, count = 0;
  std::optional<std::string> paging;
  std::string id;
  ASSERT_TRUE(r.Int(&kind) && r.Int(&flags) && r.Int(&count) && r.Bytes(&paging) && r.ShortBytes(&id));
  EXPECT_EQ(flags & 0x0008, 0x0008);
  EXPECT_EQ(flags & 0x0002, 0x0002);
  EXPECT_EQ(paging, "PAGE");
  EXPECT_EQ(id, "NEWID");
  EXPECT_EQ(changed.size(), body.size() + 2 + 5);
  EXPECT_EQ(changed.substr(changed.size() - 20), body.substr(body.size() - 20));  // the rows are untouched
}

}  // namespace
}  // namespace tessera::cql
