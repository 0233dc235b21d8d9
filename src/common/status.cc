#include "common/status.h"

namespace tessera {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kNotFound: name = "NotFound"; break;
    case Code::kAlreadyExists: name = "AlreadyExists"; break;
    case Code::kInvalidArgument: name = "InvalidArgument"; break;
    case Code::kCorruption: name = "Corruption"; break;
    case Code::kIOError: name = "IOError"; break;
    case Code::kBusy: name = "Busy"; break;
    case Code::kSyntaxError: name = "SyntaxError"; break;
    case Code::kUnauthorized: name = "Unauthorized"; break;
    case Code::kAuthenticationFailed: name = "AuthenticationFailed"; break;
    case Code::kUnavailable: name = "Unavailable"; break;
    case Code::kWriteTimeout: name = "WriteTimeout"; break;
    case Code::kReadTimeout: name = "ReadTimeout"; break;
    case Code::kFunctionFailure: name = "FunctionFailure"; break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace tessera
