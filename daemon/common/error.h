#pragma once

#include <string>
#include <string_view>

namespace tandem {

// The one error space of the project. errno, cs_error_t and netlink acks are converted into
// it where they enter; nothing deeper sees a foreign error code.
enum class ErrorCode {
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kPermissionDenied,
  kTimeout,
  kTryAgain,
  kIo,
  kParse,
  kUnavailable,
  kInternal,
};

std::string_view errorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

// Builds an Error from an errno value, naming what was being done.
Error errnoError(int err, std::string_view what);

}  // namespace tandem
