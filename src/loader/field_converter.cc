#include "loader/field_converter.h"

#include <algorithm>
#include <cctype>

#include "cql/executor/literals.h"
#include "types/serialization.h"

namespace tessera::loader {
namespace {

using cql::Term;

bool AllDigits(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Result<Term> TermFor(std::string_view text, const CqlType& type, const std::string& column, TimestampUnit unit) {
  Term t;
  t.text = std::string(text);
  switch (type.kind()) {
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt: case TypeKind::kBigint:
    case TypeKind::kVarint: case TypeKind::kCounter:
      t.kind = Term::Kind::kInteger;
      return t;
    case TypeKind::kFloat: case TypeKind::kDouble: case TypeKind::kDecimal: {
      const std::string l = Lower(text);
      t.kind = AllDigits(text) ? Term::Kind::kInteger : Term::Kind::kFloat;
      if (l == "nan") t.text = "NaN";
      if (l == "infinity" || l == "inf" || l == "+infinity") t.text = "Infinity";
      if (l == "-infinity" || l == "-inf") t.text = "-Infinity";
      return t;
    }
    case TypeKind::kBoolean: {
      const std::string l = Lower(text);
      if (l == "true" || l == "1" || l == "yes") t.text = "true";
      else if (l == "false" || l == "0" || l == "no") t.text = "false";
      else return Status::InvalidArgument("Invalid boolean '" + std::string(text) + "' for " + column);
      t.kind = Term::Kind::kBoolean;
      return t;
    }
    case TypeKind::kUuid: case TypeKind::kTimeuuid:
      t.kind = Term::Kind::kUuid;
      return t;
    case TypeKind::kBlob:
      t.kind = Term::Kind::kBlob;
      if (text.starts_with("0x") || text.starts_with("0X")) t.text = std::string(text.substr(2));
      return t;
    case TypeKind::kTimestamp:
      if (AllDigits(text)) {
        // Scale to milliseconds, the unit of a CQL timestamp literal.
        int64_t v = 0;
        try {
          v = std::stoll(std::string(text));
        } catch (...) {
          return Status::InvalidArgument("Invalid timestamp '" + std::string(text) + "' for " + column);
        }
        if (unit == TimestampUnit::kSeconds) v *= 1000;
        if (unit == TimestampUnit::kMicroseconds) v /= 1000;
        t.kind = Term::Kind::kInteger;
        t.text = std::to_string(v);
        return t;
      }
      t.kind = Term::Kind::kString;
      return t;
    case TypeKind::kList: case TypeKind::kSet: case TypeKind::kMap: case TypeKind::kTuple: case TypeKind::kUdt:
    case TypeKind::kVector:
      return Status::InvalidArgument("column " + column + " has type " + type.ToCql() +
                                     ": the loader loads scalar columns only");
    default:
      t.kind = Term::Kind::kString;
      return t;
  }
}

}  // namespace

Result<std::optional<std::string>> ConvertField(std::string_view text, const CqlType& type, const std::string& column,
                                                TimestampUnit unit) {
  const bool textual = type.kind() == TypeKind::kText || type.kind() == TypeKind::kAscii;
  if (text.empty() && !textual) return std::optional<std::string>();
  TESSERA_ASSIGN_OR_RETURN(Term term, TermFor(text, type, column, unit));
  TESSERA_ASSIGN_OR_RETURN(Value value, cql::LiteralToValue(term, type, column));
  std::string bytes;
  TESSERA_RETURN_IF_ERROR(Serialize(type, value, &bytes));
  return std::optional<std::string>(std::move(bytes));
}

}  // namespace tessera::loader
