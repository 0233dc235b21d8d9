#include "types/serialization.h"

#include <gtest/gtest.h>

#include "common/bytes.h"
#include "tests/types/random_values.h"

namespace tessera {
namespace {

std::string Hex(const CqlType& t, const Value& v) {
  std::string out;
  Status s = Serialize(t, v, &out);
  EXPECT_TRUE(s.ok()) << t.ToCql() << ": " << s.ToString();
  return ToHex(out);
}

CqlType T(const char* s) { return *CqlType::Parse(s); }

// Byte layouts from native protocol v4 §6.
TEST(SerializationTest, MatchesProtocolSpecLayouts) {
  EXPECT_EQ(Hex(T("int"), Value::Int(1)), "00000001");
  EXPECT_EQ(Hex(T("int"), Value::Int(-2)), "fffffffe");
  EXPECT_EQ(Hex(T("bigint"), Value::Int(256)), "0000000000000100");
  EXPECT_EQ(Hex(T("smallint"), Value::Int(-1)), "ffff");
  EXPECT_EQ(Hex(T("tinyint"), Value::Int(127)), "7f");
  EXPECT_EQ(Hex(T("boolean"), Value::Boolean(true)), "01");
  EXPECT_EQ(Hex(T("double"), Value::Double(1.0)), "3ff0000000000000");
  EXPECT_EQ(Hex(T("float"), Value::Float(-2.0f)), "c0000000");
  EXPECT_EQ(Hex(T("date"), Value::Int(int64_t{1} << 31)), "80000000");  // 1970-01-01
  EXPECT_EQ(Hex(T("text"), Value::Bytes("héllo")), "68c3a96c6c6f");
  // varint §6.23 examples: 0 -> 00, 128 -> 0080, -1 -> FF, -129 -> FF7F
  EXPECT_EQ(ToHex(DecimalStringToVarint(false, "0")), "00");
  EXPECT_EQ(ToHex(DecimalStringToVarint(false, "128")), "0080");
  EXPECT_EQ(ToHex(DecimalStringToVarint(true, "1")), "ff");
  EXPECT_EQ(ToHex(DecimalStringToVarint(true, "129")), "ff7f");
  EXPECT_EQ(ToHex(DecimalStringToVarint(true, "128")), "80");
  // decimal: [int scale][varint unscaled]; 1.25 = 125 * 10^-2
  EXPECT_EQ(Hex(T("decimal"), Value(Decimal{2, DecimalStringToVarint(false, "125")})), "000000027d");
  // list<int> [1, 2]: [int n] then [bytes] elements
  EXPECT_EQ(Hex(T("list<int>"), Value::List({Value::Int(1), Value::Int(2)})),
            "00000002" "0000000400000001" "0000000400000002");
  EXPECT_EQ(Hex(T("map<text, int>"), Value::Map({{Value::Bytes("a"), Value::Int(7)}})),
            "00000001" "0000000161" "0000000400000007");
  // tuple with a null component: length -1
  EXPECT_EQ(Hex(T("tuple<int, text>"), Value::List({Value::Int(5), Value()})), "0000000400000005" "ffffffff");
  // duration: vints, zig-zag: 1 month, 2 days, 3 ns -> 02 04 06
  EXPECT_EQ(Hex(T("duration"), Value(Duration{1, 2, 3})), "020406");
  EXPECT_EQ(Hex(T("duration"), Value(Duration{-1, 0, -1000})), "0100" "87cf");
}

// Cassandra 5.0's VectorType: fixed-size elements back to back, others each
// after an unsigned vint length; exactly `dimension` elements, none null.
TEST(SerializationTest, VectorsFollowCassandrasVectorType) {
  EXPECT_EQ(Hex(T("vector<float, 2>"), Value::List({Value::Float(1.0f), Value::Float(-2.5f)})), "3f800000" "c0200000");
  EXPECT_EQ(Hex(T("vector<text, 2>"), Value::List({Value::Bytes("a"), Value::Bytes("bc")})), "0161" "026263");
  std::string out;
  EXPECT_FALSE(Serialize(T("vector<float, 3>"), Value::List({Value::Float(1.0f)}), &out).ok());
  EXPECT_FALSE(Serialize(T("vector<float, 1>"), Value::List({Value()}), &out).ok());
  EXPECT_FALSE(Deserialize(T("vector<float, 2>"), std::string(7, '\0')).ok());
  EXPECT_FALSE(Deserialize(T("vector<text, 2>"), std::string("\x01\x61\x05", 3)).ok());
  EXPECT_FALSE(ValidateSerialized(T("vector<int, 1>"), std::string(5, '\0')).ok());
  auto v = Deserialize(T("vector<float, 2>"), std::string("\x3f\x80\x00\x00\xc0\x20\x00\x00", 8));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->as_elements()[1].as_float(), -2.5f);
}

TEST(SerializationTest, RandomValuesRoundTripForEveryType) {
  testing::RandomValues rv(7);
  auto types = testing::KeyableTypes();
  for (const char* extra : {"duration", "list<int>", "set<text>", "map<int, frozen<list<text>>>", "counter",
                            "vector<float, 3>", "vector<text, 2>", "vector<frozen<list<int>>, 2>", "vector<uuid, 1>"}) {
    types.push_back(T(extra));
  }
  for (const auto& type : types) {
    for (int i = 0; i < 300; ++i) {
      Value v = rv.Random(type);
      std::string bytes;
      Status st = Serialize(type, v, &bytes);
      ASSERT_TRUE(st.ok()) << type.ToCql() << ": " << st.ToString();
      auto back = Deserialize(type, bytes);
      ASSERT_TRUE(back.ok()) << type.ToCql() << ": " << back.status().ToString();
      std::string again;
      ASSERT_TRUE(Serialize(type, *back, &again).ok());
      EXPECT_EQ(ToHex(again), ToHex(bytes)) << type.ToCql();
      EXPECT_TRUE(ValidateSerialized(type, bytes).ok()) << type.ToCql();
    }
  }
}

TEST(SerializationTest, RejectsOutOfRangeAndMalformedValues) {
  std::string out;
  EXPECT_FALSE(Serialize(T("tinyint"), Value::Int(128), &out).ok());
  EXPECT_FALSE(Serialize(T("int"), Value::Int(int64_t{1} << 31), &out).ok());
  EXPECT_FALSE(Serialize(T("int"), Value::Bytes("x"), &out).ok());
  EXPECT_FALSE(Serialize(T("ascii"), Value::Bytes("\xc3\xa9"), &out).ok());
  EXPECT_FALSE(Serialize(T("text"), Value::Bytes("\xff\xfe"), &out).ok());
  EXPECT_FALSE(Serialize(T("text"), Value::Bytes("\xc3"), &out).ok());  // truncated sequence
  EXPECT_FALSE(Serialize(T("uuid"), Value::Bytes("short"), &out).ok());
  EXPECT_FALSE(Serialize(T("inet"), Value::Bytes("12345"), &out).ok());
  EXPECT_FALSE(Serialize(T("time"), Value::Int(-1), &out).ok());
  EXPECT_FALSE(Serialize(T("duration"), Value(Duration{1, -1, 0}), &out).ok());
  EXPECT_FALSE(Serialize(T("list<int>"), Value::List({Value()}), &out).ok());
  std::string v4(16, '\x11');
  v4[6] = 0x41;
  EXPECT_FALSE(Serialize(T("timeuuid"), Value::Bytes(v4), &out).ok());

  EXPECT_FALSE(Deserialize(T("int"), std::string("\x00\x01", 2)).ok());
  EXPECT_FALSE(Deserialize(T("bigint"), "").ok());
  EXPECT_FALSE(Deserialize(T("varint"), std::string("\x00\x01", 2)).ok());  // not minimal
  EXPECT_FALSE(Deserialize(T("list<int>"), std::string("\x00\x00\x00\x02\x00\x00\x00\x04\x00\x00\x00\x01", 12)).ok());
  EXPECT_FALSE(Deserialize(T("list<int>"), std::string("\x7f\xff\xff\xff", 4)).ok());  // count exceeds input
  EXPECT_FALSE(Deserialize(T("list<int>"), std::string("\xff\xff\xff\xff", 4)).ok());  // negative count
  EXPECT_FALSE(Deserialize(T("duration"), std::string("\xff", 1)).ok());
  auto bad = Deserialize(T("map<int, int>"), std::string("\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00", 10));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("at byte"), std::string::npos) << bad.status().message();
}

TEST(SerializationTest, ProtocolVintUsesLeadingOnesForLength) {
  std::string out;
  PutProtocolVint(&out, 0);
  EXPECT_EQ(ToHex(out), "00");
  out.clear();
  PutProtocolVint(&out, -64);  // zig-zag 127: 0x7f fits 7 bits
  EXPECT_EQ(ToHex(out), "7f");
  out.clear();
  PutProtocolVint(&out, 64);  // zig-zag 128: two bytes 0x80 0x80
  EXPECT_EQ(ToHex(out), "8080");
  out.clear();
  PutProtocolVint(&out, INT64_MIN);  // zig-zag 2^64-1: 9 bytes
  EXPECT_EQ(ToHex(out), "ffffffffffffffffff");
  auto d = Deserialize(T("duration"), std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff" "\x00\x00", 11));
  ASSERT_FALSE(d.ok());  // months out of int32 range
}

}  // namespace
}  // namespace tessera
