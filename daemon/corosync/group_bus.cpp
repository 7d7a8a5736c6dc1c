#include "corosync/group_bus.h"

namespace tandem::corosync {

std::string_view changeReasonName(ChangeReason reason) {
  switch (reason) {
    case ChangeReason::kJoin:
      return "join";
    case ChangeReason::kLeave:
      return "leave";
    case ChangeReason::kProcessDown:
      return "process-down";
    case ChangeReason::kNodeUp:
      return "node-up";
    case ChangeReason::kNodeDown:
      return "node-down";
    case ChangeReason::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Departure departureOf(ChangeReason reason) {
  switch (reason) {
    case ChangeReason::kLeave:
    case ChangeReason::kProcessDown:
      return Departure::kDaemonOnly;
    case ChangeReason::kNodeDown:
      return Departure::kWholeNode;
    case ChangeReason::kJoin:
    case ChangeReason::kNodeUp:
    case ChangeReason::kUnknown:
      return Departure::kUnknown;
  }
  return Departure::kUnknown;
}

std::string_view departureName(Departure departure) {
  switch (departure) {
    case Departure::kDaemonOnly:
      return "daemon-only";
    case Departure::kWholeNode:
      return "whole-node";
    case Departure::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace tandem::corosync
