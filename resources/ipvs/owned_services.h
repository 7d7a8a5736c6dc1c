#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "ipvs/ipvs_model.h"

// The virtual services tandemd owns (manage = "owned"), kept in a small text file so that a
// service dropped from the config while tandemd was down is still removed after the restart.
// One service a line, in the reconciler's wording:
//
//   # IPVS virtual services tandemd owns; rewritten after each complete reconcile
//   tcp 198.51.100.10:80
//   udp [2001:db8::10]:53
//   fwmark 7 ipv6
//
// The text is made and read by pure functions; the file itself sits behind OwnedStore.
namespace tandem::resources::ipvs {

std::string formatOwned(const std::set<ServiceKey>& owned);

struct ParsedOwned {
  std::set<ServiceKey> keys;          // the lines that name a service
  std::vector<std::string> warnings;  // "PATH:LINE: ...", one per line that does not
};
// Blank lines and '#' comments are skipped; a line that names no service is a warning naming
// path and line, and is otherwise ignored.
ParsedOwned parseOwned(std::string_view text, const std::string& path);

// Where the owned services are kept.
class OwnedStore {
 public:
  virtual ~OwnedStore() = default;
  virtual const std::string& path() const = 0;
  // The file's text; nullopt when there is no file yet (a first start).
  [[nodiscard]] virtual Result<std::optional<std::string>> read() = 0;
  // Replaces the file's text atomically: a crash leaves the old text or the new one.
  [[nodiscard]] virtual Result<void> write(const std::string& text) = 0;
};

// A file (temp + fsync + rename); its directory is created (one level) when missing. The
// daemon's is <[daemon] state_dir>/ipvs-owned: /var/lib/tandem by default, which outlives a
// reboot while the kernel's IPVS table does not: after one, a service that the list names and
// something else created at boot with the same key is taken for tandem's.
class OwnedFile final : public OwnedStore {
 public:
  explicit OwnedFile(std::string path) : path_(std::move(path)) {}
  const std::string& path() const override { return path_; }
  Result<std::optional<std::string>> read() override;
  Result<void> write(const std::string& text) override;

 private:
  std::string path_;
};

}  // namespace tandem::resources::ipvs
