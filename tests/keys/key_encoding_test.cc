#include "keys/key_encoding.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/bytes.h"
#include "tests/types/random_values.h"
#include "types/serialization.h"
#include "types/value_compare.h"

namespace tessera {
namespace {

int Sign(int v) { return (v > 0) - (v < 0); }

std::string Serialized(const CqlType& t, const Value& v) {
  std::string out;
  EXPECT_TRUE(Serialize(t, v, &out).ok()) << t.ToCql();
  return out;
}

std::string Encoded(const CqlType& t, const std::string& serialized, SortOrder order) {
  std::string out;
  Status s = EncodeKeyComponent(t, serialized, order, &out);
  EXPECT_TRUE(s.ok()) << t.ToCql() << ": " << s.ToString();
  return out;
}

// Property: for random pairs of every keyable type, memcmp order of the
// encodings equals Cassandra's typed order (ASC), and its reverse (DESC).
TEST(KeyEncodingTest, ByteOrderEqualsTypedOrderForEveryKeyableType) {
  testing::RandomValues rv(42);
  for (const auto& type : testing::KeyableTypes()) {
    int less = 0, equal = 0, greater = 0;
    for (int i = 0; i < 3000; ++i) {
      Value a = rv.Random(type), b = rv.Random(type);
      std::string sa = Serialized(type, a), sb = Serialized(type, b);
      if (sa.empty() || sb.empty()) continue;  // empty values cannot be keys of non-text types
      int typed = Sign(CompareValues(type, a, b));
      int asc = Sign(Encoded(type, sa, SortOrder::kAsc).compare(Encoded(type, sb, SortOrder::kAsc)));
      int desc = Sign(Encoded(type, sa, SortOrder::kDesc).compare(Encoded(type, sb, SortOrder::kDesc)));
      ASSERT_EQ(asc, typed) << type.ToCql() << " a=" << ToHex(sa) << " b=" << ToHex(sb);
      ASSERT_EQ(desc, -typed) << type.ToCql() << " a=" << ToHex(sa) << " b=" << ToHex(sb);
      (typed < 0 ? less : typed == 0 ? equal : greater)++;
    }
    EXPECT_GT(less, 0) << type.ToCql();
    EXPECT_GT(greater, 0) << type.ToCql();
  }
}

// Property: tuples of components (a composite key) concatenate and keep order,
// because every encoding is self-delimiting. Mixed ASC/DESC as in
// CLUSTERING ORDER BY (a ASC, b DESC, c ASC).
TEST(KeyEncodingTest, ConcatenatedComponentsOrderLikeTheTypedTuple) {
  testing::RandomValues rv(43);
  auto types = testing::KeyableTypes();
  for (int round = 0; round < 400; ++round) {
    std::vector<CqlType> tuple;
    std::vector<SortOrder> orders;
    int n = static_cast<int>(rv.Uniform(2, 4));
    for (int i = 0; i < n; ++i) {
      tuple.push_back(types[static_cast<size_t>(rv.Uniform(0, static_cast<int64_t>(types.size()) - 1))]);
      orders.push_back(rv.Coin() ? SortOrder::kAsc : SortOrder::kDesc);
    }
    for (int i = 0; i < 20; ++i) {
      std::string ea, eb;
      int typed = 0;
      for (int c = 0; c < n; ++c) {
        Value a = rv.Random(tuple[c]), b = rv.Uniform(0, 2) == 0 ? a : rv.Random(tuple[c]);
        std::string sa = Serialized(tuple[c], a), sb = Serialized(tuple[c], b);
        if (sa.empty()) sa = Serialized(tuple[c], b);
        if (sb.empty()) sb = sa;
        if (sa.empty()) goto next_pair;  // both empty non-text values: not a key
        {
          auto va = Deserialize(tuple[c], sa), vb = Deserialize(tuple[c], sb);
          int cmp = Sign(CompareValues(tuple[c], *va, *vb));
          if (orders[c] == SortOrder::kDesc) cmp = -cmp;
          if (typed == 0) typed = cmp;
          ea += Encoded(tuple[c], sa, orders[c]);
          eb += Encoded(tuple[c], sb, orders[c]);
        }
      }
      ASSERT_EQ(Sign(ea.compare(eb)), typed);
    next_pair:;
    }
  }
}

// The seeds' trap: naive "a100" + "#" + ... concatenation misorders; so do
// decimal strings of integer ids. The encoding must not.
TEST(KeyEncodingTest, SeedsPaddingTrapIsOrderedCorrectly) {
  CqlType text = CqlType::Scalar(TypeKind::kText), bigint = CqlType::Scalar(TypeKind::kBigint);
  auto key = [&](const std::string& s, int64_t id) {
    std::string out = Encoded(text, s, SortOrder::kAsc);
    return out + Encoded(bigint, Serialized(bigint, Value::Int(id)), SortOrder::kAsc);
  };
  // ("a100", 5) < ("a1001", 1): naive "a100#5" vs "a1001#1" compares '#' (0x23) with '1' (0x31) and agrees
  // by luck, but ("a100", 9) vs ("a100", 10) as text "9" > "10" does not; with a '~' separator
  // "a100~1" > "a1001~1" is wrong. Check the typed order in all of these.
  EXPECT_LT(key("a100", 5), key("a1001", 1));
  EXPECT_LT(key("a100", 9), key("a100", 10));
  EXPECT_LT(key("a100", -1), key("a100", 0));
  EXPECT_LT(key("a1", 99), key("a10", 0));
  EXPECT_LT(key("", 1), key("a", 0));
  EXPECT_LT(Encoded(text, std::string("a\0", 2), SortOrder::kAsc), Encoded(text, "a\x01", SortOrder::kAsc));
  EXPECT_LT(Encoded(text, "a", SortOrder::kAsc), Encoded(text, std::string("a\0", 2), SortOrder::kAsc));
}

TEST(KeyEncodingTest, DecodeRoundTripsAndNormalisesSetsAndMaps) {
  testing::RandomValues rv(44);
  for (const auto& type : testing::KeyableTypes()) {
    for (SortOrder order : {SortOrder::kAsc, SortOrder::kDesc}) {
      for (int i = 0; i < 500; ++i) {
        std::string s = Serialized(type, rv.Random(type));
        if (s.empty() && type.kind() != TypeKind::kText && type.kind() != TypeKind::kAscii &&
            type.kind() != TypeKind::kBlob) {
          continue;
        }
        std::string enc = Encoded(type, s, order) + "trailing";
        std::string_view in = enc;
        std::string decoded;
        Status st = DecodeKeyComponent(type, order, &in, &decoded);
        ASSERT_TRUE(st.ok()) << type.ToCql() << ": " << st.ToString();
        EXPECT_EQ(in, "trailing") << type.ToCql();
        // Decoding yields a value that compares equal and re-encodes identically.
        EXPECT_EQ(Encoded(type, decoded, order) + "trailing", enc) << type.ToCql();
        auto a = Deserialize(type, s), b = Deserialize(type, decoded);
        ASSERT_TRUE(b.ok()) << type.ToCql() << ": " << b.status().ToString();
        EXPECT_EQ(CompareValues(type, *a, *b), 0) << type.ToCql();
        // (A user type's trailing null fields decode as omitted.)
        if (!type.IsCollection() && type.kind() != TypeKind::kFloat && type.kind() != TypeKind::kDouble &&
            type.kind() != TypeKind::kUdt) {
          EXPECT_EQ(ToHex(decoded), ToHex(s)) << type.ToCql();  // exact bytes (NaN is canonicalised)
        }
      }
    }
  }
}

// ALTER TYPE ADD appends a field: a key written under the old definition must
// encode the same under the new one (trailing null fields are not encoded).
TEST(KeyEncodingTest, AUserTypeKeyStaysTheSameWhenTheTypeGainsAField) {
  const CqlType text = CqlType::Scalar(TypeKind::kText), i32 = CqlType::Scalar(TypeKind::kInt);
  const CqlType before = CqlType::UserType("ks", "a", {"s", "n"}, {text, i32}, true);
  const CqlType after = CqlType::UserType("ks", "a", {"s", "n", "added"}, {text, i32, text}, true);
  for (SortOrder order : {SortOrder::kAsc, SortOrder::kDesc}) {
    for (const Value& v : {Value::List({Value::Bytes("x"), Value::Int(1)}), Value::List({Value::Bytes("x"), Value()}),
                           Value::List({Value(), Value()})}) {
      std::string old_key = Encoded(before, Serialized(before, v), order);
      EXPECT_EQ(old_key, Encoded(after, Serialized(after, v), order));
      std::vector<Value> padded = v.as_elements();
      padded.resize(3);  // the same value as the new type's driver sends it: every field, nulls written
      EXPECT_EQ(old_key, Encoded(after, Serialized(after, Value::List(padded)), order));
      std::string_view in = old_key;
      std::string decoded;
      ASSERT_TRUE(DecodeKeyComponent(after, order, &in, &decoded).ok());
      EXPECT_TRUE(in.empty());
    }
  }
  // A null field sorts before any value of it, and a shorter value before a longer one.
  auto key = [&](const Value& v) { return Encoded(after, Serialized(after, v), SortOrder::kAsc); };
  EXPECT_LT(key(Value::List({Value::Bytes("x")})), key(Value::List({Value::Bytes("x"), Value(), Value::Bytes("")})));
  EXPECT_LT(key(Value::List({Value::Bytes("x"), Value(), Value::Bytes("z")})),
            key(Value::List({Value::Bytes("x"), Value::Int(0)})));
}

TEST(KeyEncodingTest, MalformedInputIsAnErrorNotACrash) {
  testing::RandomValues rv(45);
  for (const auto& type : testing::KeyableTypes()) {
    for (int i = 0; i < 300; ++i) {
      std::string enc = Encoded(type, Serialized(type, rv.Random(type)), SortOrder::kAsc);
      if (enc.empty()) continue;
      // Truncations and random byte flips: decode must fail cleanly or succeed within bounds.
      std::string damaged = enc.substr(0, static_cast<size_t>(rv.Uniform(0, static_cast<int64_t>(enc.size()) - 1)));
      std::string_view in = damaged;
      std::string out;
      (void)DecodeKeyComponent(type, SortOrder::kAsc, &in, &out);
      EXPECT_LE(in.size(), damaged.size());
      std::string flipped = enc;
      flipped[static_cast<size_t>(rv.Uniform(0, static_cast<int64_t>(enc.size()) - 1))] ^= static_cast<char>(rv.Uniform(1, 255));
      in = flipped;
      out.clear();
      (void)DecodeKeyComponent(type, SortOrder::kDesc, &in, &out);
    }
  }
  std::string_view empty;
  std::string out;
  EXPECT_FALSE(DecodeKeyComponent(CqlType::Scalar(TypeKind::kText), SortOrder::kAsc, &empty, &out).ok());
}

TEST(KeyEncodingTest, RejectsValuesThatCannotBeKeys) {
  std::string out;
  EXPECT_FALSE(EncodeKeyComponent(*CqlType::Parse("list<int>"), std::string(4, '\0'), SortOrder::kAsc, &out).ok());
  EXPECT_FALSE(EncodeKeyComponent(*CqlType::Parse("duration"), "\x00\x00\x00", SortOrder::kAsc, &out).ok());
  EXPECT_FALSE(EncodeKeyComponent(*CqlType::Parse("int"), "", SortOrder::kAsc, &out).ok());
  EXPECT_FALSE(EncodeKeyComponent(*CqlType::Parse("int"), "abc", SortOrder::kAsc, &out).ok());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace tessera
