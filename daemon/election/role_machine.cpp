#include "election/role_machine.h"

namespace tandem::election {

namespace {

using A = RoleAction;
using E = RoleEvent;
using R = Role;

struct Row {
  Role from;
  RoleEvent event;
  Role to;
  std::vector<RoleAction> actions;
};

// Every pair not listed here is ignored. Conditions (standby, health) are not remembered here:
// after a release the node lands in BACKUP and ClusterCore re-sends the condition events that
// still hold, so each row stays one simple fact.
const std::vector<Row>& table() {
  static const std::vector<Row> rows = {
      {R::kInit, E::kInitDone, R::kBackup, {A::kAnnounce}},
      {R::kInit, E::kResumeActive, R::kTakingOver, {A::kStartResources, A::kAnnounce}},
      {R::kInit, E::kResumeHeld, R::kActive, {A::kAnnounce}},
      {R::kInit, E::kReleaseOrphans, R::kReleasing, {A::kStopResources, A::kAnnounce}},

      {R::kBackup, E::kElected, R::kTakingOver, {A::kStartResources, A::kAnnounce}},
      {R::kBackup, E::kElectedNeedsFence, R::kFencing, {A::kRunFence, A::kAnnounce}},
      {R::kBackup, E::kStandbyOn, R::kStandby, {A::kAnnounce}},
      {R::kBackup, E::kHealthLost, R::kFault, {A::kAnnounce}},

      {R::kFencing, E::kFenceDone, R::kTakingOver, {A::kStartResources, A::kAnnounce}},
      {R::kFencing, E::kFenceFailed, R::kBackup, {A::kAlarm, A::kAnnounce}},
      {R::kFencing, E::kNotElected, R::kBackup, {A::kCancelFence, A::kAnnounce}},
      {R::kFencing, E::kStandbyOn, R::kStandby, {A::kCancelFence, A::kAnnounce}},
      {R::kFencing, E::kHealthLost, R::kFault, {A::kCancelFence, A::kAnnounce}},

      {R::kTakingOver, E::kResourcesStarted, R::kActive, {A::kAnnounce}},
      {R::kTakingOver,
       E::kResourceFailed,
       R::kReleasing,
       {A::kAlarm, A::kStopResources, A::kAnnounce}},
      {R::kTakingOver, E::kNotElected, R::kReleasing, {A::kStopResources, A::kAnnounce}},
      {R::kTakingOver, E::kStandbyOn, R::kReleasing, {A::kStopResources, A::kAnnounce}},
      {R::kTakingOver, E::kHealthLost, R::kReleasing, {A::kStopResources, A::kAnnounce}},

      {R::kActive, E::kNotElected, R::kReleasing, {A::kStopResources, A::kAnnounce}},
      {R::kActive, E::kStandbyOn, R::kReleasing, {A::kStopResources, A::kAnnounce}},
      {R::kActive, E::kHealthLost, R::kReleasing, {A::kStopResources, A::kAnnounce}},
      {R::kActive, E::kResourceFailed, R::kReleasing, {A::kAlarm, A::kStopResources, A::kAnnounce}},

      {R::kReleasing, E::kResourcesStopped, R::kBackup, {A::kSendRelease, A::kAnnounce}},
      // A stop that fails leaves resources we cannot account for: stay out of the election and
      // say so loudly; the peers see resources_held and will not take over on top of them.
      {R::kReleasing, E::kResourceFailed, R::kFault, {A::kAlarm, A::kAnnounce}},

      {R::kStandby, E::kStandbyOff, R::kBackup, {A::kAnnounce}},

      {R::kFault, E::kHealthBack, R::kBackup, {A::kAnnounce}},
      {R::kFault, E::kStandbyOn, R::kStandby, {A::kAnnounce}},
  };
  return rows;
}

}  // namespace

std::optional<Transition> step(Role role, RoleEvent event) {
  for (const Row& row : table()) {
    if (row.from == role && row.event == event) return Transition{row.to, row.actions};
  }
  return std::nullopt;
}

bool holdsResources(Role r) {
  return r == Role::kTakingOver || r == Role::kActive || r == Role::kReleasing;
}

std::string_view roleName(Role r) {
  switch (r) {
    case Role::kInit:
      return "INIT";
    case Role::kBackup:
      return "BACKUP";
    case Role::kFencing:
      return "FENCING";
    case Role::kTakingOver:
      return "TAKING_OVER";
    case Role::kActive:
      return "ACTIVE";
    case Role::kReleasing:
      return "RELEASING";
    case Role::kStandby:
      return "STANDBY";
    case Role::kFault:
      return "FAULT";
  }
  return "?";
}

std::string_view roleEventName(RoleEvent e) {
  switch (e) {
    case E::kInitDone:
      return "init-done";
    case E::kResumeActive:
      return "resume-active";
    case E::kResumeHeld:
      return "resume-held";
    case E::kReleaseOrphans:
      return "release-orphans";
    case E::kElected:
      return "elected";
    case E::kElectedNeedsFence:
      return "elected-needs-fence";
    case E::kNotElected:
      return "not-elected";
    case E::kFenceDone:
      return "fence-done";
    case E::kFenceFailed:
      return "fence-failed";
    case E::kResourcesStarted:
      return "resources-started";
    case E::kResourcesStopped:
      return "resources-stopped";
    case E::kResourceFailed:
      return "resource-failed";
    case E::kStandbyOn:
      return "standby-on";
    case E::kStandbyOff:
      return "standby-off";
    case E::kHealthLost:
      return "health-lost";
    case E::kHealthBack:
      return "health-back";
  }
  return "?";
}

std::string_view roleActionName(RoleAction a) {
  switch (a) {
    case A::kStartResources:
      return "start-resources";
    case A::kStopResources:
      return "stop-resources";
    case A::kRunFence:
      return "run-fence";
    case A::kCancelFence:
      return "cancel-fence";
    case A::kAnnounce:
      return "announce";
    case A::kSendRelease:
      return "send-release";
    case A::kAlarm:
      return "alarm";
  }
  return "?";
}

}  // namespace tandem::election
