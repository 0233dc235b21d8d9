// Vector search through the query processor (Cassandra 5.0's vector type,
// storage-attached index and ANN OF; db/vector_index.h,
// cql/executor/ann_search.h): the type on the wire and in the schema, the
// index kept in step with inserts, updates, deletes, TTLs, partition
// deletions and TRUNCATE, rebuilt after a restart, answers that match an
// exact search, the similarity functions, and Cassandra's refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "cql/executor/query_processor.h"
#include "cql/protocol/response_decoding.h"
#include "db/vector_index.h"
#include "tests/db/test_util.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

std::string VectorLiteral(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int32_t IntOf(const std::optional<std::string>& cell) {
  return static_cast<int32_t>(GetBigEndian32(cell->data()));
}

float FloatOf(const std::optional<std::string>& cell) {
  auto v = Deserialize(CqlType::Scalar(TypeKind::kFloat), *cell);
  return v->as_float();
}

class VectorSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tdb_ = std::make_unique<testing::TestDatabase>("cql_vector_search");
    Open();
    ASSERT_FALSE(Run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").is_error());
    ASSERT_FALSE(Run("CREATE TABLE ks.items (id int PRIMARY KEY, label text, v vector<float, 8>)").is_error());
  }
  void TearDown() override { processor_.reset(); }
  void Open() { processor_ = std::make_unique<QueryProcessor>(&tdb_->coordinator(), NodeInfo{}); }

  DecodedResponse Run(const std::string& cql) {
    QueryRequest q;
    q.query = cql;
    q.params.consistency = Consistency::kOne;
    Reply r = processor_->Process(conn_, Request{q}, {});
    auto decoded = DecodeResponse(static_cast<uint8_t>(r.opcode), 0, r.body);
    EXPECT_TRUE(decoded.ok()) << cql;
    return decoded.ok() ? *decoded : DecodedResponse{};
  }
  std::string ErrorOf(const std::string& cql) {
    DecodedResponse r = Run(cql);
    EXPECT_TRUE(r.is_error()) << cql;
    return r.error_message;
  }
  // The ids of an ANN query's rows, in order.
  std::vector<int32_t> Ids(const std::string& cql) {
    DecodedResponse r = Run(cql);
    EXPECT_FALSE(r.is_error()) << cql << ": " << r.error_message;
    std::vector<int32_t> ids;
    for (const auto& row : r.rows.rows) ids.push_back(IntOf(row[0]));
    return ids;
  }
  std::vector<float> RandomVector(std::mt19937& rng) {
    std::normal_distribution<float> n(0, 1);
    std::vector<float> v(8);
    for (float& x : v) x = n(rng);
    return v;
  }
  // The exact top k ids by cosine similarity among `rows`.
  static std::vector<int32_t> ExactTop(const std::vector<std::vector<float>>& rows, const std::vector<float>& q, size_t k) {
    std::vector<std::pair<float, int32_t>> scored;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i].empty()) {
        scored.emplace_back(VectorSimilarity(IndexDef::Similarity::kCosine, q, rows[i]), static_cast<int32_t>(i));
      }
    }
    std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<int32_t> out;
    for (size_t i = 0; i < k && i < scored.size(); ++i) out.push_back(scored[i].second);
    return out;
  }

  std::unique_ptr<testing::TestDatabase> tdb_;
  std::unique_ptr<QueryProcessor> processor_;
  ConnectionState conn_;
};

TEST_F(VectorSearchTest, TheVectorTypeOnTheWireAndInTheSchema) {
  ASSERT_FALSE(Run("INSERT INTO ks.items (id, v) VALUES (1, [1, 2, 3, 4, 5, 6, 7, 8.5])").is_error());
  DecodedResponse r = Run("SELECT v FROM ks.items WHERE id = 1");
  ASSERT_EQ(r.rows.rows.size(), 1u);
  EXPECT_EQ(r.rows.columns[0].type, *CqlType::Parse("vector<float, 8>"));  // read back from the custom type's class
  auto v = Deserialize(r.rows.columns[0].type, *r.rows.rows[0][0]);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->as_elements()[7].as_float(), 8.5f);
  EXPECT_EQ(ErrorOf("INSERT INTO ks.items (id, v) VALUES (2, [1, 2])"),
            "Invalid vector literal for v of type vector<float, 8>; expected 8 elements, but given 2");
  r = Run("SELECT type FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 'items' AND column_name = 'v'");
  ASSERT_EQ(r.rows.rows.size(), 1u);
  EXPECT_EQ(*r.rows.rows[0][0], "vector<float, 8>");
  EXPECT_EQ(ErrorOf("CREATE TABLE ks.bad (k int PRIMARY KEY, v vector<float, 0>)").find("vectors may only have positive dimensions; given 0") !=
                std::string::npos,
            true);
  r = Run("SELECT toJson(v) FROM ks.items WHERE id = 1");
  EXPECT_EQ(*r.rows.rows[0][0], "[1, 2, 3, 4, 5, 6, 7, 8.5]");
}

TEST_F(VectorSearchTest, AnnMatchesAnExactSearchAndFollowsWrites) {
  ASSERT_FALSE(Run("CREATE CUSTOM INDEX items_v ON ks.items (v) USING 'StorageAttachedIndex' "
                   "WITH OPTIONS = {'similarity_function': 'cosine'}").is_error());
  std::mt19937 rng(11);
  std::vector<std::vector<float>> stored(600);
  for (int i = 0; i < 600; ++i) {
    stored[i] = RandomVector(rng);
    ASSERT_FALSE(Run("INSERT INTO ks.items (id, label, v) VALUES (" + std::to_string(i) + ", 'l', " +
                     VectorLiteral(stored[i]) + ")").is_error());
  }
  double hits = 0;
  for (int q = 0; q < 20; ++q) {
    const std::vector<float> query = RandomVector(rng);
    auto got = Ids("SELECT id FROM ks.items ORDER BY v ANN OF " + VectorLiteral(query) + " LIMIT 10");
    ASSERT_EQ(got.size(), 10u);
    auto exact = ExactTop(stored, query, 10);
    for (int32_t id : got) hits += std::count(exact.begin(), exact.end(), id);
  }
  EXPECT_GE(hits / 200.0, 0.95) << "recall@10";
  const size_t indexed = tdb_->db().VectorIndexSize(**tdb_->db().GetTable("ks", "items"), "items_v");
  EXPECT_EQ(indexed, 600u);

  // An update moves a row next to the query; a delete, a TTL that ran out and
  // a null take rows out.
  const std::vector<float> query = RandomVector(rng);
  const std::string ann = "SELECT id FROM ks.items ORDER BY v ANN OF " + VectorLiteral(query) + " LIMIT 3";
  ASSERT_FALSE(Run("UPDATE ks.items SET v = " + VectorLiteral(query) + " WHERE id = 7").is_error());
  EXPECT_EQ(Ids(ann)[0], 7);
  ASSERT_FALSE(Run("DELETE FROM ks.items WHERE id = 7").is_error());
  stored[7].clear();
  EXPECT_EQ(Ids(ann), ExactTop(stored, query, 3));
  ASSERT_FALSE(Run("INSERT INTO ks.items (id, v) VALUES (1000, " + VectorLiteral(query) + ") USING TTL 10").is_error());
  EXPECT_EQ(Ids(ann)[0], 1000);
  tdb_->AdvanceSeconds(11);
  EXPECT_EQ(Ids(ann), ExactTop(stored, query, 3));
  const int32_t first = ExactTop(stored, query, 1)[0];
  ASSERT_FALSE(Run("UPDATE ks.items SET v = null WHERE id = " + std::to_string(first)).is_error());
  stored[first].clear();
  EXPECT_EQ(Ids(ann), ExactTop(stored, query, 3));
  // The expired row's entry stays until the row is written again (the read
  // back skips it): 600 - 2 + 1.
  EXPECT_EQ(tdb_->db().VectorIndexSize(**tdb_->db().GetTable("ks", "items"), "items_v"), 599u);

  // A restart: the index is rebuilt from the stored rows at the first search,
  // without the expired one.
  processor_.reset();
  tdb_->Reopen();
  Open();
  EXPECT_EQ(Ids(ann), ExactTop(stored, query, 3));
  EXPECT_EQ(tdb_->db().VectorIndexSize(**tdb_->db().GetTable("ks", "items"), "items_v"), 598u);

  ASSERT_FALSE(Run("TRUNCATE ks.items").is_error());
  EXPECT_TRUE(Ids(ann).empty());
  EXPECT_EQ(tdb_->db().VectorIndexSize(**tdb_->db().GetTable("ks", "items"), "items_v"), 0u);
}

TEST_F(VectorSearchTest, PartitionsClusteringRowsAndOtherSimilarities) {
  ASSERT_FALSE(Run("CREATE TABLE ks.docs (user int, doc int, v vector<float, 2>, PRIMARY KEY (user, doc))").is_error());
  ASSERT_FALSE(Run("CREATE CUSTOM INDEX ON ks.docs (v) USING 'vector_index' "
                   "WITH OPTIONS = {'similarity_function': 'EUCLIDEAN'}").is_error());
  for (int user = 0; user < 3; ++user) {
    for (int doc = 0; doc < 5; ++doc) {
      ASSERT_FALSE(Run("INSERT INTO ks.docs (user, doc, v) VALUES (" + std::to_string(user) + ", " + std::to_string(doc) +
                       ", [" + std::to_string(user) + ", " + std::to_string(doc) + "])").is_error());
    }
  }
  DecodedResponse r = Run("SELECT user, doc, similarity_euclidean(v, [1, 2]) FROM ks.docs ORDER BY v ANN OF [1, 2] LIMIT 2");
  ASSERT_EQ(r.rows.rows.size(), 2u);
  EXPECT_EQ(IntOf(r.rows.rows[0][0]), 1);
  EXPECT_EQ(IntOf(r.rows.rows[0][1]), 2);
  EXPECT_FLOAT_EQ(FloatOf(r.rows.rows[0][2]), 1.0f);   // 1 / (1 + 0)
  EXPECT_FLOAT_EQ(FloatOf(r.rows.rows[1][2]), 0.5f);   // 1 / (1 + 1)
  EXPECT_EQ(r.rows.columns[2].name, "system.similarity_euclidean(v, [1, 2])");
  // Within a partition: exact.
  r = Run("SELECT doc FROM ks.docs WHERE user = 2 ORDER BY v ANN OF [0, 4] LIMIT 2");
  ASSERT_EQ(r.rows.rows.size(), 2u);
  EXPECT_EQ(IntOf(r.rows.rows[0][0]), 4);
  EXPECT_EQ(IntOf(r.rows.rows[1][0]), 3);
  // A partition deletion takes its rows out of the index.
  ASSERT_FALSE(Run("DELETE FROM ks.docs WHERE user = 1").is_error());
  r = Run("SELECT user FROM ks.docs ORDER BY v ANN OF [1, 2] LIMIT 15");
  EXPECT_EQ(r.rows.rows.size(), 10u);
  for (const auto& row : r.rows.rows) EXPECT_NE(IntOf(row[0]), 1);
  // A range deletion too.
  ASSERT_FALSE(Run("DELETE FROM ks.docs WHERE user = 2 AND doc >= 2").is_error());
  EXPECT_EQ(Run("SELECT user FROM ks.docs ORDER BY v ANN OF [1, 2] LIMIT 15").rows.rows.size(), 7u);

  r = Run("SELECT similarity_cosine(v, [0, 1]), similarity_dot_product(v, [0, 1]) FROM ks.docs WHERE user = 0 AND doc = 1");
  ASSERT_EQ(r.rows.rows.size(), 1u);
  EXPECT_FLOAT_EQ(FloatOf(r.rows.rows[0][0]), 1.0f);  // (1 + cos 0) / 2
  EXPECT_FLOAT_EQ(FloatOf(r.rows.rows[0][1]), 1.0f);  // (1 + 1) / 2
}

// A batch that writes another table of the same layout beside the indexed
// one: only the indexed table's rows become entries.
TEST_F(VectorSearchTest, ABatchAcrossTablesIndexesOnlyItsTable) {
  ASSERT_FALSE(Run("CREATE TABLE ks.twin (id int PRIMARY KEY, label text, v vector<float, 8>)").is_error());
  ASSERT_FALSE(Run("CREATE CUSTOM INDEX items_v ON ks.items (v) USING 'sai'").is_error());
  ASSERT_FALSE(Run("BEGIN BATCH INSERT INTO ks.twin (id, v) VALUES (1, [1, 1, 1, 1, 1, 1, 1, 1]); "
                   "INSERT INTO ks.items (id, v) VALUES (2, [1, 0, 0, 0, 0, 0, 0, 0]); APPLY BATCH").is_error());
  EXPECT_EQ(tdb_->db().VectorIndexSize(**tdb_->db().GetTable("ks", "items"), "items_v"), 1u);
  EXPECT_EQ(Ids("SELECT id FROM ks.items ORDER BY v ANN OF [1, 1, 1, 1, 1, 1, 1, 1] LIMIT 5"), std::vector<int32_t>{2});
}

TEST_F(VectorSearchTest, RefusalsInCassandrasWords) {
  ASSERT_FALSE(Run("CREATE TABLE ks.one (k int PRIMARY KEY, v vector<float, 1>, n int)").is_error());
  EXPECT_EQ(ErrorOf("SELECT id FROM ks.items ORDER BY v ANN OF [1, 2, 3, 4, 5, 6, 7, 8] LIMIT 3"),
            "ANN ordering by vector requires the column to be indexed");
  EXPECT_EQ(ErrorOf("CREATE CUSTOM INDEX ON ks.one (v) USING 'StorageAttachedIndex'"),
            "Cosine similarity is not supported for single-dimension vectors");
  EXPECT_NE(ErrorOf("CREATE CUSTOM INDEX ON ks.one (n) USING 'StorageAttachedIndex'").find("vector<float, n>"),
            std::string::npos);
  EXPECT_NE(ErrorOf("CREATE CUSTOM INDEX ON ks.items (v) USING 'org.example.Lucene'").find("not supported"), std::string::npos);
  EXPECT_NE(ErrorOf("CREATE CUSTOM INDEX ON ks.items (v) USING 'sai' WITH OPTIONS = {'similarity_function': 'manhattan'}")
                .find("Invalid similarity_function 'manhattan'"),
            std::string::npos);
  ASSERT_FALSE(Run("CREATE CUSTOM INDEX ON ks.items (v) USING 'sai'").is_error());
  const std::string q = "SELECT id FROM ks.items ORDER BY v ANN OF [1, 2, 3, 4, 5, 6, 7, 8]";
  EXPECT_EQ(ErrorOf(q), "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than 1000. LIMIT was NO LIMIT");
  EXPECT_EQ(ErrorOf(q + " LIMIT 1001"),
            "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than 1000. LIMIT was 1001");
  EXPECT_EQ(ErrorOf("SELECT id FROM ks.items WHERE label = 'x' ORDER BY v ANN OF [1, 2, 3, 4, 5, 6, 7, 8] LIMIT 3 ALLOW FILTERING"),
            "ANN ordering by vector requires all restricted column(s) to be indexed");
  EXPECT_EQ(ErrorOf("SELECT id FROM ks.items ORDER BY label ANN OF [1, 2, 3, 4, 5, 6, 7, 8] LIMIT 3"),
            "ANN ordering is only supported on float vector indexes");
  EXPECT_EQ(ErrorOf("SELECT count(*) FROM ks.items ORDER BY v ANN OF [1, 2, 3, 4, 5, 6, 7, 8] LIMIT 3"),
            "ANN ordering can not be run with aggregation");
  EXPECT_EQ(ErrorOf("SELECT id FROM ks.items ORDER BY v ANN OF [0, 0, 0, 0, 0, 0, 0, 0] LIMIT 3"),
            "Zero and near-zero vectors cannot be indexed or queried with cosine similarity");
  EXPECT_NE(ErrorOf("SELECT id FROM ks.items ORDER BY v ANN OF [1, 2] LIMIT 3").find("expected 8 elements, but given 2"),
            std::string::npos);
  // system_schema and DESCRIBE show the index as Cassandra 5.0 does.
  DecodedResponse r = Run("SELECT kind, options FROM system_schema.indexes WHERE keyspace_name = 'ks' AND table_name = 'items'");
  ASSERT_EQ(r.rows.rows.size(), 1u);
  EXPECT_EQ(*r.rows.rows[0][0], "CUSTOM");
  r = Run("DESCRIBE INDEX ks.items_v_idx");
  ASSERT_EQ(r.rows.rows.size(), 1u);
  EXPECT_EQ(*r.rows.rows[0].back(),
            "CREATE CUSTOM INDEX items_v_idx ON ks.items (v) USING 'sai' WITH OPTIONS = {'similarity_function': 'cosine'};");
  ASSERT_FALSE(Run("DROP INDEX ks.items_v_idx").is_error());
  EXPECT_EQ(ErrorOf("SELECT id FROM ks.items ORDER BY v ANN OF [1, 2, 3, 4, 5, 6, 7, 8] LIMIT 3"),
            "ANN ordering by vector requires the column to be indexed");
}

}  // namespace
}  // namespace tessera::cql
