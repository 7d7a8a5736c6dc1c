#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sysctl/sysctl_access.h"

namespace tandem::fakes {

// /proc/sys as a map: a missing key reads as kNotFound; every write is recorded, and a key can
// be made to refuse writes (as a read-only /proc/sys in a container does).
class FakeSysctl final : public resources::sysctl::SysctlReader,
                         public resources::sysctl::SysctlWriter {
 public:
  std::map<std::string, std::string> values;
  std::vector<std::pair<std::string, std::string>> writes;
  std::map<std::string, Error> refuse;
  std::map<std::string, std::string> ignore_writes;  // key -> what it keeps reading as

  Result<std::string> read(std::string_view key) const override {
    auto it = values.find(std::string(key));
    if (it == values.end()) return fail(ErrorCode::kNotFound, "no " + std::string(key));
    return it->second;
  }
  Result<void> write(std::string_view key, std::string_view value) override {
    writes.emplace_back(std::string(key), std::string(value));
    if (auto r = refuse.find(std::string(key)); r != refuse.end()) return fail(r->second);
    if (ignore_writes.count(std::string(key)) == 0) values[std::string(key)] = std::string(value);
    return {};
  }
};

}  // namespace tandem::fakes
