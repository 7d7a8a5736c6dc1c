#pragma once

#include <string>

#include "common/state_files.h"
#include "core/resource.h"

namespace tandem::resources {

// The simplest resource: a file that exists while this node holds the resources, naming the
// node. Lab tests and scripts read it to see who is ACTIVE; a restarted daemon finds it and
// knows it held them.
class StateFileResource final : public Resource {
 public:
  StateFileResource(StateFiles& files, std::string path, std::string node);

  std::string_view name() const override { return "state-file"; }
  void start(Done done) override;
  void stop(Done done) override;
  void monitor(Done done) override;
  bool present() const override;

 private:
  StateFiles& files_;
  std::string path_;
  std::string node_;
};

}  // namespace tandem::resources
