#include "cql/executor/error_mapping.h"

namespace tessera::cql {

ErrorResponse ToErrorResponse(const Status& status) {
  ErrorResponse e;
  e.message = status.message();
  switch (status.code()) {
    case Status::Code::kSyntaxError: e.code = ErrorCode::kSyntaxError; break;
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound: e.code = ErrorCode::kInvalid; break;
    case Status::Code::kAlreadyExists: e.code = ErrorCode::kAlreadyExists; break;
    case Status::Code::kBusy: e.code = ErrorCode::kOverloaded; break;
    case Status::Code::kUnauthorized: e.code = ErrorCode::kUnauthorized; break;
    case Status::Code::kAuthenticationFailed: e.code = ErrorCode::kBadCredentials; break;
    case Status::Code::kUnavailable:
    case Status::Code::kWriteTimeout:
    case Status::Code::kReadTimeout: {
      e.code = status.code() == Status::Code::kUnavailable    ? ErrorCode::kUnavailable
               : status.code() == Status::Code::kWriteTimeout ? ErrorCode::kWriteTimeout
                                                              : ErrorCode::kReadTimeout;
      if (const Status::ReplicaShortfall* f = status.shortfall()) {
        e.consistency = static_cast<Consistency>(f->consistency);
        e.required_or_received = f->first;
        e.alive_or_blockfor = f->second;
        e.write_type = f->write_type;
        e.data_present = f->data_present;
        e.contentions = f->contentions;
      }
      break;
    }
    case Status::Code::kFunctionFailure:
      e.code = ErrorCode::kFunctionFailure;
      if (const Status::FunctionCall* f = status.function_call()) {
        e.keyspace = f->keyspace;
        e.function = f->function;
        e.argument_types = f->argument_types;
      }
      break;
    case Status::Code::kOk:
    case Status::Code::kCorruption:
    case Status::Code::kIOError: e.code = ErrorCode::kServerError; break;
  }
  return e;
}

}  // namespace tessera::cql
