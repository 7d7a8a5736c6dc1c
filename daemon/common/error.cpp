#include "common/error.h"

#include <cerrno>
#include <cstring>

namespace tandem {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid-argument";
    case ErrorCode::kNotFound:
      return "not-found";
    case ErrorCode::kAlreadyExists:
      return "already-exists";
    case ErrorCode::kPermissionDenied:
      return "permission-denied";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kTryAgain:
      return "try-again";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kParse:
      return "parse";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

Error errnoError(int err, std::string_view what) {
  ErrorCode code = ErrorCode::kIo;
  switch (err) {
    case ENOENT:
      code = ErrorCode::kNotFound;
      break;
    case EEXIST:
      code = ErrorCode::kAlreadyExists;
      break;
    case EACCES:
    case EPERM:
      code = ErrorCode::kPermissionDenied;
      break;
    case EAGAIN:
      code = ErrorCode::kTryAgain;
      break;
    case ETIMEDOUT:
      code = ErrorCode::kTimeout;
      break;
    case EINVAL:
      code = ErrorCode::kInvalidArgument;
      break;
    default:
      break;
  }
  return Error{code, std::string(what) + ": " + std::strerror(err)};
}

}  // namespace tandem
