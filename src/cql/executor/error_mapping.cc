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
    case Status::Code::kOk:
    case Status::Code::kCorruption:
    case Status::Code::kIOError: e.code = ErrorCode::kServerError; break;
  }
  return e;
}

}  // namespace tessera::cql
