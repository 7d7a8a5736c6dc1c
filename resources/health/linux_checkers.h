#pragma once

#include <memory>

#include "health/checker.h"
#include "loop/dispatcher.h"
#include "process/child_runner.h"

// The real checker of each check type, for tandemd (LinuxPlatform::makeChecker) and for
// `tandem check run`, which runs one probe in the admin tool's own loop. Null for a type not
// built yet.
namespace tandem::resources::health {

std::unique_ptr<Checker> makeLinuxChecker(config::CheckType type, loop::Dispatcher& dispatcher,
                                          process::ChildRunner& children);

}  // namespace tandem::resources::health
