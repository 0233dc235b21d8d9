// The select clause: which values a SELECT returns per row, under which
// names and types — columns (with aliases), WRITETIME(col) and TTL(col),
// token(pk...), fields of user types (col.field.field), elements and slices of
// sets and maps (m['k'], s[a..b], as Cassandra 4's CASSANDRA-7396), the blob conversions (<type>AsBlob, blobAs<type>), toJson(col) (json_values.h), CAST(col AS type) (cast.h), user-defined functions of columns and literals
// (cql/functions/user_functions.h), and the aggregates count(*), count(col), min, max, sum, avg and
// user-defined aggregates
// (which fold all rows, or each GROUP BY group, into one; plain columns beside
// them take the first row's value).
//
// Thread safety: a Selection is immutable after Make; an Aggregation is used
// by one execution.
#pragma once

#include <memory>
#include <optional>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/executor/result_set.h"
#include "cql/executor/arithmetic.h"
#include "cql/functions/user_functions.h"
#include "cql/parser/raw_statements.h"
#include "types/schema.h"
#include "types/value.h"

namespace tessera::cql {

class Selection {
 public:
  // Errors: InvalidArgument (unknown column, WRITETIME/TTL on a key column or
  // a collection, a blob conversion of a column of another type, unsupported
  // functions, a user-defined function none of whose overloads takes the
  // arguments). `functions` resolves user-defined functions and aggregates
  // (null: none exist); it must outlive the Selection.
  static Result<Selection> Make(const TableSchema& table, const SelectStatement& stmt,
                                const UserFunctions* functions = nullptr);

  const std::vector<ColumnSpec>& columns() const { return columns_; }
  bool is_aggregate() const { return aggregate_; }
  // The output cells of one row (non-aggregate selections). `now_micros`
  // and `rng` evaluate now(), uuid() and the current* functions.
  // An arithmetic selector that fails (an integer divided by zero) gives null
  // and its error in `*failure` (when given, and first only).
  std::vector<std::optional<std::string>> Project(const SourceRow& row, int64_t now_micros = 0,
                                                  std::mt19937_64* rng = nullptr, Status* failure = nullptr) const;
  // Folds rows (all, or one group's) into one aggregate row. A user-defined
  // aggregate that fails gives null and its error in `*failure` (when given,
  // and first only).
  std::vector<std::optional<std::string>> Aggregate(std::span<const SourceRow> rows, Status* failure = nullptr) const;

 private:
  struct Item {
    enum class Kind {
      kColumn, kWritetime, kTtl, kToken, kCount, kCountColumn, kMin, kMax, kSum, kAvg,
      kNow, kUuid, kCurrentTimestamp, kCurrentDate, kCurrentTime, kToTimestamp, kToUnixTimestamp, kToDate,
      kBitReverse, kBlobAs, kToJson, kCast, kField, kElement, kSlice, kOperation, kUserFunction, kUserAggregate,
      kSimilarity,
    } kind;
    size_t column = 0;
    std::vector<size_t> fields;  // kField: the field indexes from the column's user type down
    std::optional<Value> from, to;  // kElement: the key (from); kSlice: the bounds, inclusive, either open
    bool preserve_sign = false;  // kBitReverse
    CqlType blob_type = CqlType::Scalar(TypeKind::kBlob);  // kBlobAs: the type the bytes must be; kCast: the target
    std::shared_ptr<const ArithmeticOperand> expr;          // kOperation
    // kUserFunction, kUserAggregate: the function or aggregate and its
    // arguments, each a column (index) or a literal (its bytes).
    std::shared_ptr<const LuaFunction> function;
    std::shared_ptr<const ResolvedAggregate> aggregate;
    struct Argument {
      size_t column = SIZE_MAX;
      std::optional<std::string> literal;
    };
    std::vector<Argument> arguments;  // also kSimilarity's two vectors (blob_type: their type)
    IndexDef::Similarity similarity = IndexDef::Similarity::kCosine;  // kSimilarity
  };
  // similarity_cosine / _euclidean / _dot_product (selection_similarity.cc).
  static std::optional<IndexDef::Similarity> SimilarityFunction(const std::string& name);
  static Status MakeSimilarityCall(const TableSchema& t, const Selector& x, IndexDef::Similarity similarity, Item* item,
                                   std::string* name, CqlType* type);
  static std::optional<std::string> EvaluateSimilarity(const Item& item, const SourceRow& row);
  // Resolves x (a call of a user-defined function or aggregate) into `item`.
  static Status MakeUserCall(const TableSchema& t, const Selector& x, const UserFunctions& functions, Item* item,
                             std::string* name, CqlType* type);
  static std::vector<std::optional<std::string>> UserArguments(const Item& item, const SourceRow& row);
  static std::optional<std::string> FoldUserAggregate(const Item& item, std::span<const SourceRow> rows, Status* failure);
  // Whether `name` (lower case) is one of the functions Tessera provides.
  static bool IsNativeFunction(const std::string& name);
  static std::optional<std::string> SelectElements(const CqlType& type, const std::optional<std::string>& cell,
                                                   const Item& item);
  std::vector<Item> items_;
  std::vector<ColumnSpec> columns_;
  std::vector<size_t> partition_key_columns_;
  const TableSchema* table_ = nullptr;
  bool aggregate_ = false;
};

}  // namespace tessera::cql
