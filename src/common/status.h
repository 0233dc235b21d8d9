// Status and Result<T>: the error model of every Tessera layer.
//
// A Status is OK or carries a code and a human-readable message. Functions
// that can fail return Status (or Result<T> when they also produce a value);
// they never throw across layer boundaries. The CQL layer maps codes to CQL
// error codes in one table (a later issue); the codes here are deliberately
// coarse and engine-level.
//
// Thread safety: Status and Result are plain values; distinct objects may be
// used from different threads, a single object needs external synchronisation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tessera {

class Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,         // keyspace, table, tablet or key does not exist
    kAlreadyExists,    // keyspace or table already exists
    kInvalidArgument,  // caller's input is malformed or violates the schema
    kCorruption,       // stored bytes do not decode
    kIOError,          // the storage engine failed
    kBusy,             // a conflicting operation is in progress; retry
    kSyntaxError,      // a statement does not parse (CQL 0x2000); the message names line:column
    kUnauthorized,     // the logged-in role lacks a permission (CQL 0x2100)
    kAuthenticationFailed,  // wrong credentials, or a role that may not log in (CQL 0x0100)
    kUnavailable,      // too few replicas alive for the consistency level (CQL 0x1000); see ReplicaShortfall
    kWriteTimeout,     // replicas did not acknowledge a write in time (CQL 0x1100); see ReplicaShortfall
    kReadTimeout,      // replicas did not answer a read in time (CQL 0x1200); see ReplicaShortfall
    kFunctionFailure,  // a user-defined function failed (CQL 0x1400); see FunctionCall
  };

  // What a consistency failure reports (native protocol v4 §9, the bodies
  // of Unavailable, WriteTimeout and ReadTimeout): the consistency level
  // (its wire value), then required/alive (Unavailable) or received/blockfor
  // (the time-outs), the write type (WriteTimeout: "SIMPLE", "BATCH",
  // "UNLOGGED_BATCH", "COUNTER", "BATCH_LOG", "CAS") and data_present
  // (ReadTimeout: whether the replica asked for data answered).
  struct ReplicaShortfall {
    uint16_t consistency = 1;
    int32_t first = 0;   // required (Unavailable) or received (time-outs)
    int32_t second = 0;  // alive (Unavailable) or blockfor (time-outs)
    std::string write_type = "SIMPLE";
    bool data_present = false;
    uint16_t contentions = 0;  // CAS: Paxos rounds lost to other proposers (v5's Write_timeout)
  };

  // What a FunctionFailure reports (native protocol v4 §9): the function's
  // keyspace, name and argument types (CQL text).
  struct FunctionCall {
    std::string keyspace, function;
    std::vector<std::string> argument_types;
  };

  Status() = default;  // OK

  static Status OK() { return Status(); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status AlreadyExists(std::string msg) { return Status(Code::kAlreadyExists, std::move(msg)); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status Busy(std::string msg) { return Status(Code::kBusy, std::move(msg)); }
  static Status SyntaxError(std::string msg) { return Status(Code::kSyntaxError, std::move(msg)); }
  static Status Unauthorized(std::string msg) { return Status(Code::kUnauthorized, std::move(msg)); }
  static Status AuthenticationFailed(std::string msg) { return Status(Code::kAuthenticationFailed, std::move(msg)); }
  // REQUIRES: code is kUnavailable, kWriteTimeout or kReadTimeout.
  static Status ConsistencyFailure(Code code, std::string msg, ReplicaShortfall shortfall) {
    Status s(code, std::move(msg));
    s.shortfall_ = std::make_shared<const ReplicaShortfall>(std::move(shortfall));
    return s;
  }

  static Status FunctionFailure(std::string msg, FunctionCall call) {
    Status s(Code::kFunctionFailure, std::move(msg));
    s.function_ = std::make_shared<const FunctionCall>(std::move(call));
    return s;
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsAlreadyExists() const { return code_ == Code::kAlreadyExists; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsSyntaxError() const { return code_ == Code::kSyntaxError; }
  bool IsUnauthorized() const { return code_ == Code::kUnauthorized; }
  bool IsAuthenticationFailed() const { return code_ == Code::kAuthenticationFailed; }
  // Set for kUnavailable, kWriteTimeout and kReadTimeout; nullptr otherwise.
  const ReplicaShortfall* shortfall() const { return shortfall_.get(); }
  // Set for kFunctionFailure; nullptr otherwise.
  const FunctionCall* function_call() const { return function_.get(); }

  // "OK" or "<CodeName>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
  std::shared_ptr<const ReplicaShortfall> shortfall_;  // shared: Status stays cheap to copy
  std::shared_ptr<const FunctionCall> function_;
};

// Result<T> holds either a value or a non-OK Status.
// REQUIRES: value() only when ok(); status() is OK when a value is held.
template <typename T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}              // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {}       // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T& value() & { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  Status status() const { return ok() ? Status::OK() : std::get<Status>(data_); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace tessera

// Propagates a non-OK Status from an expression returning Status.
#define TESSERA_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::tessera::Status _st = (expr);            \
    if (!_st.ok()) return _st;                 \
  } while (0)

#define TESSERA_CONCAT_INNER(a, b) a##b
#define TESSERA_CONCAT(a, b) TESSERA_CONCAT_INNER(a, b)

// Assigns the value of a Result<T> expression to `lhs`, or returns its Status.
#define TESSERA_ASSIGN_OR_RETURN(lhs, expr) \
  TESSERA_ASSIGN_OR_RETURN_IMPL(TESSERA_CONCAT(_res_, __LINE__), lhs, expr)
#define TESSERA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
