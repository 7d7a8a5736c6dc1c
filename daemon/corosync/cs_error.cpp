#include "corosync/cs_error.h"

#include <string>

namespace tandem::corosync {

std::string_view csErrorName(cs_error_t rc) {
  switch (rc) {
    case CS_OK:
      return "CS_OK";
    case CS_ERR_LIBRARY:
      return "CS_ERR_LIBRARY";
    case CS_ERR_VERSION:
      return "CS_ERR_VERSION";
    case CS_ERR_INIT:
      return "CS_ERR_INIT";
    case CS_ERR_TIMEOUT:
      return "CS_ERR_TIMEOUT";
    case CS_ERR_TRY_AGAIN:
      return "CS_ERR_TRY_AGAIN";
    case CS_ERR_INVALID_PARAM:
      return "CS_ERR_INVALID_PARAM";
    case CS_ERR_NO_MEMORY:
      return "CS_ERR_NO_MEMORY";
    case CS_ERR_BAD_HANDLE:
      return "CS_ERR_BAD_HANDLE";
    case CS_ERR_BUSY:
      return "CS_ERR_BUSY";
    case CS_ERR_ACCESS:
      return "CS_ERR_ACCESS";
    case CS_ERR_NOT_EXIST:
      return "CS_ERR_NOT_EXIST";
    case CS_ERR_NAME_TOO_LONG:
      return "CS_ERR_NAME_TOO_LONG";
    case CS_ERR_EXIST:
      return "CS_ERR_EXIST";
    case CS_ERR_NO_SPACE:
      return "CS_ERR_NO_SPACE";
    case CS_ERR_INTERRUPT:
      return "CS_ERR_INTERRUPT";
    case CS_ERR_NAME_NOT_FOUND:
      return "CS_ERR_NAME_NOT_FOUND";
    case CS_ERR_NO_RESOURCES:
      return "CS_ERR_NO_RESOURCES";
    case CS_ERR_NOT_SUPPORTED:
      return "CS_ERR_NOT_SUPPORTED";
    case CS_ERR_BAD_OPERATION:
      return "CS_ERR_BAD_OPERATION";
    case CS_ERR_FAILED_OPERATION:
      return "CS_ERR_FAILED_OPERATION";
    case CS_ERR_MESSAGE_ERROR:
      return "CS_ERR_MESSAGE_ERROR";
    case CS_ERR_QUEUE_FULL:
      return "CS_ERR_QUEUE_FULL";
    case CS_ERR_QUEUE_NOT_AVAILABLE:
      return "CS_ERR_QUEUE_NOT_AVAILABLE";
    case CS_ERR_BAD_FLAGS:
      return "CS_ERR_BAD_FLAGS";
    case CS_ERR_TOO_BIG:
      return "CS_ERR_TOO_BIG";
    case CS_ERR_NO_SECTIONS:
      return "CS_ERR_NO_SECTIONS";
    case CS_ERR_CONTEXT_NOT_FOUND:
      return "CS_ERR_CONTEXT_NOT_FOUND";
    case CS_ERR_TOO_MANY_GROUPS:
      return "CS_ERR_TOO_MANY_GROUPS";
    case CS_ERR_SECURITY:
      return "CS_ERR_SECURITY";
  }
  return "CS_ERR_UNKNOWN";
}

ErrorCode csErrorCode(cs_error_t rc) {
  switch (rc) {
    case CS_ERR_TRY_AGAIN:
    case CS_ERR_BUSY:
    case CS_ERR_QUEUE_FULL:
    case CS_ERR_INTERRUPT:
      return ErrorCode::kTryAgain;
    case CS_ERR_TIMEOUT:
      return ErrorCode::kTimeout;
    case CS_ERR_INVALID_PARAM:
    case CS_ERR_NAME_TOO_LONG:
    case CS_ERR_BAD_FLAGS:
    case CS_ERR_TOO_BIG:
      return ErrorCode::kInvalidArgument;
    case CS_ERR_NOT_EXIST:
    case CS_ERR_NAME_NOT_FOUND:
    case CS_ERR_NO_SECTIONS:
    case CS_ERR_CONTEXT_NOT_FOUND:
      return ErrorCode::kNotFound;
    case CS_ERR_EXIST:
      return ErrorCode::kAlreadyExists;
    case CS_ERR_ACCESS:
    case CS_ERR_SECURITY:
      return ErrorCode::kPermissionDenied;
    // No engine to talk to, or it cannot take one more client: retrying later may work.
    case CS_ERR_LIBRARY:
    case CS_ERR_BAD_HANDLE:
    case CS_ERR_QUEUE_NOT_AVAILABLE:
    case CS_ERR_NO_MEMORY:
    case CS_ERR_NO_SPACE:
    case CS_ERR_NO_RESOURCES:
    case CS_ERR_TOO_MANY_GROUPS:
      return ErrorCode::kUnavailable;
    case CS_OK:
    case CS_ERR_VERSION:
    case CS_ERR_INIT:
    case CS_ERR_NOT_SUPPORTED:
    case CS_ERR_BAD_OPERATION:
    case CS_ERR_FAILED_OPERATION:
    case CS_ERR_MESSAGE_ERROR:
      return ErrorCode::kInternal;
  }
  return ErrorCode::kInternal;
}

Error csError(cs_error_t rc, std::string_view what) {
  std::string name(csErrorName(rc));
  if (name == "CS_ERR_UNKNOWN") name = "CS_ERR_" + std::to_string(static_cast<int>(rc));
  return Error{csErrorCode(rc),
               std::string(what) + ": " + name + " (" + std::to_string(static_cast<int>(rc)) + ")"};
}

bool csConnectionGone(cs_error_t rc) { return rc == CS_ERR_LIBRARY || rc == CS_ERR_BAD_HANDLE; }

}  // namespace tandem::corosync
