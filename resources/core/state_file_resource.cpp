#include "core/state_file_resource.h"

namespace tandem::resources {

StateFileResource::StateFileResource(StateFiles& files, std::string path, std::string node)
    : files_(files), path_(std::move(path)), node_(std::move(node)) {}

void StateFileResource::start(Done done) { done(files_.write(path_, node_ + "\n")); }

void StateFileResource::stop(Done done) { done(files_.remove(path_)); }

void StateFileResource::monitor(Done done) {
  if (present()) {
    done(Result<void>());
    return;
  }
  // Removed behind our back: put it back, as a VIP's monitor would.
  done(files_.write(path_, node_ + "\n"));
}

bool StateFileResource::present() const { return files_.exists(path_); }

}  // namespace tandem::resources
