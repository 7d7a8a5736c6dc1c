#pragma once
// The ldirectord importer's own parts, shared by ldirectord_import.cpp (the file, the globals,
// the cluster) and ldirectord_virtual.cpp (each virtual block). Internal to tools/import.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "conf_draft.h"
#include "importer.h"
#include "ldirectord_parser.h"
#include "mapping.h"

namespace tandem::importer::ldirectord_import {

namespace ld = ldirectord;

template <size_t N>
bool among(const std::array<std::string_view, N>& set, std::string_view s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// A number of seconds as a TOML duration ("1m30s" in quotes), and without the quotes for prose.
std::string seconds(int64_t s);
std::string plain(int64_t s);

class Importer {
 public:
  Importer(const std::string& file, const ImportOptions& options)
      : file_(file), options_(options) {}

  ImportResult run(std::string_view text);

 private:
  struct Effective {
    const ld::Directive* directive = nullptr;  // the virtual's own, else the global one
    bool global = false;
  };

  // Each problem once, though a value shared by several virtual services is read by each.
  void error(int line, std::string message) {
    for (const auto& e : errors_) {
      if (e.line == line && e.message == message) return;
    }
    errors_.push_back({file_, line, std::move(message)});
  }
  void rec(int line, std::string_view block, std::string_view keyword,
           const std::string& detail = "") {
    record(report_, Source::kLdirectord, file_, line, block, keyword, detail);
  }
  std::string where(int line) const { return file_ + ":" + std::to_string(line); }

  // One virtual block on its way to a [[virtual_server]], its check and its real servers: what
  // the parts of importVirtual share (ldirectord_virtual.cpp).
  struct VirtualImport {
    explicit VirtualImport(const ld::VirtualBlock& block);
    const ld::VirtualBlock& v;
    const bool fwmark;
    const bool ipv6;
    const uint16_t vport;
    ConfTable vs;
    ConfTable check;
    std::vector<ConfTable> reals;
    std::set<const ld::Directive*> used;  // every directive is recorded once
    std::string protocol;
    bool udp = false;
    std::string service_forwarding;
    std::string type;            // the check tandem runs
    bool takes_request = false;  // http, https or dns: request and receive carry over
    bool weights_zero = false;   // checktype = off
  };
  // The kind of check tandem runs for ldirectord's checktype and service.
  struct CheckKind {
    std::string type;
    std::string type_comment;
    std::string command;
    bool uses_negotiate_timeout = false;
    bool weights_zero = false;
    bool takes_request = false;
  };

  void checkKeys();
  void recordGlobals();
  void writeCluster();
  // A virtual block, one family of directives at a time, in the order of the report.
  void importVirtual(const ld::VirtualBlock& v);
  bool importIdentity(VirtualImport& vi);  // protocol, name, address; false for a duplicate
  void importScheduling(VirtualImport& vi);
  void importFailover(VirtualImport& vi);  // quiescent, fallback, fallbackcommand
  void importCheck(VirtualImport& vi);
  CheckKind checkKind(VirtualImport& vi, const std::string& checktype, const std::string& service,
                      int64_t check_timeout, int64_t interval);
  void importRequestAndReceive(VirtualImport& vi);
  void recordUnused(VirtualImport& vi);
  void importRealServers(VirtualImport& vi);
  void use(VirtualImport& vi, const ld::Directive* d, std::string_view keyword,
           const std::string& detail = "");
  Effective eff(const VirtualImport& vi, std::string_view key) const {
    if (const auto* d = own(vi.v, key)) return {d, false};
    return {global(key), true};
  }

  const ld::Directive* global(std::string_view key) const {
    const ld::Directive* found = nullptr;
    for (const auto& d : config_.globals) {
      if (d.key == key) found = &d;
    }
    return found;
  }
  static const ld::Directive* own(const ld::VirtualBlock& v, std::string_view key) {
    const ld::Directive* found = nullptr;
    for (const auto& d : v.directives) {
      if (d.key == key) found = &d;
    }
    return found;
  }
  // A number from a directive, within [lo, hi]; an error (and nullopt) otherwise.
  std::optional<int64_t> number(const ld::Directive& d, int64_t lo, int64_t hi,
                                std::string_view why) {
    auto n = ld::parseCount(ld::unquote(d.value), d.key);
    if (!n) {
      error(d.line, n.error().message);
      return std::nullopt;
    }
    if (*n < lo || *n > hi) {
      error(d.line, d.key + " " + std::to_string(*n) + " is out of range: use " +
                        std::to_string(lo) + " to " + std::to_string(hi) + " (" + std::string(why) +
                        ")");
      return std::nullopt;
    }
    return *n;
  }

  const std::string& file_;
  const ImportOptions& options_;
  ld::Config config_;
  std::vector<ImportError> errors_;
  Report report_;
  ConfDraft draft_;
  std::vector<ConfTable> services_;  // the virtual servers' tables, in order
  std::vector<IpAddress> vips_;      // the virtual services' addresses, for the [[vip]] hints
  std::set<std::string> names_;
  std::map<std::string, int> seen_services_;  // identity -> line
  bool quiescent_defaulted_ = false;
};

}  // namespace tandem::importer::ldirectord_import
