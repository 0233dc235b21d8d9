// Selection's vector similarity functions (Cassandra 5.0): similarity_cosine,
// similarity_euclidean and similarity_dot_product of two vector<float, n>,
// each argument a column or a literal (read as the other argument's type),
// a float in [0, 1] where higher is closer (db/vector_index.h has the formulas).
#include "cql/executor/literals.h"
#include "cql/executor/selection.h"
#include "db/vector_index.h"
#include "types/serialization.h"
#include "types/value_format.h"

namespace tessera::cql {

std::optional<IndexDef::Similarity> Selection::SimilarityFunction(const std::string& name) {
  if (name == "similarity_cosine") return IndexDef::Similarity::kCosine;
  if (name == "similarity_euclidean") return IndexDef::Similarity::kEuclidean;
  if (name == "similarity_dot_product") return IndexDef::Similarity::kDotProduct;
  return std::nullopt;
}

Status Selection::MakeSimilarityCall(const TableSchema& t, const Selector& x, IndexDef::Similarity similarity,
                                     Item* item, std::string* name, CqlType* type) {
  const std::string fn = "similarity_" + std::string(SimilarityName(similarity));
  if (x.args.size() != 2) {
    return Status::InvalidArgument("Invalid number of arguments for function system." + fn + ": 2 required but " +
                                   std::to_string(x.args.size()) + " provided");
  }
  // The vector type comes from the column argument(s).
  std::optional<CqlType> vector_type;
  for (const Selector& arg : x.args) {
    if (arg.kind != Selector::Kind::kColumn) continue;
    const ColumnDef* c = t.FindColumn(arg.name);
    if (!c) return Status::InvalidArgument("Undefined column name " + arg.name);
    if (c->type.kind() != TypeKind::kVector || c->type.params()[0].kind() != TypeKind::kFloat) {
      return Status::InvalidArgument("Function system." + fn + " requires a float vector argument, but found " +
                                     c->name + " of type " + c->type.ToCql());
    }
    if (vector_type && *vector_type != c->type) {
      return Status::InvalidArgument("All arguments of function system." + fn + " must have the same vector dimensions");
    }
    vector_type = c->type;
  }
  if (!vector_type) {
    return Status::InvalidArgument("Cannot infer type of argument in call to function system." + fn +
                                   ": use type casts to disambiguate");
  }
  std::vector<std::string> texts;
  for (const Selector& arg : x.args) {
    Item::Argument a;
    if (arg.kind == Selector::Kind::kColumn) {
      a.column = static_cast<size_t>(t.FindColumn(arg.name) - t.columns.data());
      texts.push_back(arg.name);
    } else if (arg.kind == Selector::Kind::kTerm && arg.term && arg.term->kind != Term::Kind::kBindMarker) {
      TESSERA_ASSIGN_OR_RETURN(Value v, LiteralToValue(*arg.term, *vector_type, "argument of system." + fn));
      if (v.is_null()) return Status::InvalidArgument("Function system." + fn + " does not accept null arguments");
      std::string bytes;
      TESSERA_RETURN_IF_ERROR(Serialize(*vector_type, v, &bytes));
      texts.push_back(FormatValue(*vector_type, bytes));
      a.literal = std::move(bytes);
    } else {
      return Status::InvalidArgument("Arguments of system." + fn + " are columns or literals");
    }
    item->arguments.push_back(std::move(a));
  }
  item->kind = Item::Kind::kSimilarity;
  item->similarity = similarity;
  item->blob_type = *vector_type;
  *name = "system." + fn + "(" + texts[0] + ", " + texts[1] + ")";
  *type = CqlType::Scalar(TypeKind::kFloat);
  return Status::OK();
}

std::optional<std::string> Selection::EvaluateSimilarity(const Item& item, const SourceRow& row) {
  std::vector<std::vector<float>> vectors;
  for (const auto& bytes : UserArguments(item, row)) {
    if (!bytes) return std::nullopt;  // a null argument: null, as Cassandra's functions
    auto v = DecodeFloatVector(*bytes, item.blob_type.dimension());
    if (!v.ok()) return std::nullopt;
    vectors.push_back(std::move(v).value());
  }
  const float similarity = VectorSimilarity(item.similarity, vectors[0], vectors[1]);
  std::string out;
  (void)Serialize(CqlType::Scalar(TypeKind::kFloat), Value::Float(similarity), &out);
  return out;
}

}  // namespace tessera::cql
