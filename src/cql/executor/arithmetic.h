// Arithmetic operators, as Cassandra 4.0's OperationFcts (CASSANDRA-11935):
// + - * / % between numbers, timestamp or date + / - duration, and unary -.
//
// Number types: the result of `l op r` is, with size tinyint 1, smallint 2,
// int 4, bigint 8, float 4, double 8, varint and decimal unbounded, a
// floating type (float, double, decimal by the larger size) when either side
// is float, double or decimal, else an integer type (tinyint, smallint, int,
// bigint, varint by the larger size): int + bigint is bigint, int + float is
// float, bigint + float is double, varint + float is decimal. Fixed-size
// integers wrap as Java's do (INT_MAX + 1 is INT_MIN); an integer division
// or remainder by zero fails ("the operation 'int / int' failed: / by zero",
// FunctionFailure); float division by zero gives infinity or NaN; varint and
// decimal are exact (GMP), decimal division rounded to 34 digits, half even
// (Java's MathContext.DECIMAL128), trailing zeros dropped down to the
// preferred scale.
// Temporal: a timestamp or date plus or minus a duration moves by its
// months (calendar months in UTC, the day clamped to the month's end), days
// and nanoseconds (milliseconds kept); a date takes only durations of whole
// days ("The duration must have a day precision. Was: 1h").
// A null operand gives null.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "types/cql_type.h"

namespace tessera::cql {

// The type of `l op r` (op one of + - * / %). Errors: InvalidArgument "the
// '+' operation is not supported between text and int" (Cassandra's words).
Result<CqlType> OperationType(char op, const CqlType& l, const CqlType& r);

// `lv op rv`, both serialized in their types (non-null); the result
// serialized in OperationType(op, l, r). Errors: FunctionFailure-kind
// failures as Status::Aborted with Cassandra's message; InvalidArgument for
// unsupported operands.
Result<std::string> EvaluateOperation(char op, const CqlType& l, const std::string& lv, const CqlType& r,
                                      const std::string& rv);

// -v for a number type (Java's negation: -INT_MIN is INT_MIN). Errors:
// InvalidArgument for another type.
Result<std::string> Negate(const CqlType& type, const std::string& value);

// An operand tree of a selector (`a * 2 + b`), built by the selection.
struct ArithmeticOperand {
  enum class Kind { kColumn, kConstant, kOperation, kNegation };
  Kind kind = Kind::kConstant;
  size_t column = 0;        // kColumn: the schema column index
  std::string constant;     // kConstant: serialized (never null)
  char op = '+';            // kOperation
  CqlType type = CqlType::Scalar(TypeKind::kInt);  // this node's result type
  std::vector<ArithmeticOperand> args;             // kOperation: 2; kNegation: 1
};

// The node's value for a row (`values` by schema column index). Errors: as
// EvaluateOperation.
Result<std::optional<std::string>> EvaluateOperand(const ArithmeticOperand& e,
                                                   const std::vector<std::optional<std::string>>& values);

}  // namespace tessera::cql
