#pragma once
// The keepalived importer's own parts, shared by keepalived_import.cpp (the walk, globals,
// VRRP instances and groups), keepalived_virtual.cpp (virtual servers, real servers and their
// checks) and keepalived_render.cpp (the model written out as TOML). Internal to tools/import.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/ip_address.h"
#include "conf_draft.h"
#include "importer.h"
#include "keepalived_parser.h"
#include "mapping.h"

namespace tandem::importer::keepalived_import {

constexpr Source K = Source::kKeepalived;
constexpr int64_t kMaxRange = 256;  // members one virtual_server_group range may expand to

inline std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// keepalived's TIMER: seconds, with up to six decimals ("1.5").
inline std::optional<int64_t> timerMs(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  int64_t whole = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (i == 9) return std::nullopt;  // past 9 digits it is no time (nor an int64)
    whole = whole * 10 + (text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  int64_t ms = whole * 1000;
  if (i < text.size()) {
    if (text[i] != '.') return std::nullopt;
    int64_t scale = 100;
    for (++i; i < text.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
      ms += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  return ms;
}

inline std::optional<int64_t> integer(const std::string& text, int64_t lo, int64_t hi) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  int64_t v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

inline std::string seconds(int64_t ms) {
  std::string s = tomlDuration(ms);
  return s.substr(1, s.size() - 2);
}

inline std::string joinArgs(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

using Keys = std::vector<std::pair<std::string, std::string>>;  // key -> TOML literal

inline void setKey(Keys& keys, const std::string& key, std::string value) {
  for (auto& [k, v] : keys) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  keys.emplace_back(key, std::move(value));
}

// Timing settings that a virtual server, a real server and a checker can each set; the innermost
// wins.
struct Timing {
  std::optional<int64_t> delay_loop, connect_timeout, delay_before_retry;
  std::optional<int> retry;
  std::optional<bool> alpha;
  std::optional<std::string> virtualhost;
};

struct CheckSpec {
  std::string type;  // tandem's
  Keys keys;         // without interval, timeout, rise, fall
  int64_t interval = 0, timeout = 0;
  int fall = 1;
  bool alpha = false;
  bool operator==(const CheckSpec&) const = default;
};

struct RealSpec {
  std::string address;  // host:port
  Keys keys;            // weight, forwarding, thresholds
  std::optional<CheckSpec> check;
};

struct ServiceSpec {
  std::string file;
  int line = 0;
  std::string address;  // host:port, or empty for fwmark
  std::optional<int64_t> fwmark;
  Keys keys;
  bool inhibit = false;
  std::vector<RealSpec> reals;
};

struct VipSpec {
  std::string address;  // prefix
  std::string interface;
  std::string label;
  bool operator==(const VipSpec&) const = default;
};

// What one keepalived.conf says.
struct Director {
  std::string file;
  std::string name;
  std::optional<int> priority;
  std::string state;
  std::vector<std::string> interfaces;
  std::optional<std::string> failback;  // "auto", "manual", "delayed"
  std::optional<int64_t> failback_delay, advert_ms;
  std::vector<VipSpec> vips;
  Keys notify, sync, ipvs, announce;
  std::vector<ServiceSpec> services;
};

struct GroupMember {
  std::string address;
  std::optional<int64_t> fwmark;
  std::string file;
  int line = 0;
};

// Walks one file's statements once, reporting every line through the mapping table, into one
// Director.
class Importer {
 public:
  Importer(Report& report, std::vector<ImportError>& errors) : report_(report), errors_(errors) {}

  Director run(const KaParse& parse) {
    for (const auto& s : parse.consumed) {
      record(report_, K, s.file, s.line, "",
             s.what.rfind("include", 0) == 0 ? "include" : "$NAME=");
    }
    for (const auto& s : parse.skipped) record(report_, K, s.file, s.line, "", "@ID", s.what);
    // Groups first: a virtual_server may name one defined below it.
    for (const auto& s : parse.statements) {
      if (s.keyword == "virtual_server_group") group(s);
    }
    for (const auto& s : parse.statements) top(s);
    return std::move(d_);
  }

 private:
  void error(const KaStatement& s, std::string message) {
    errors_.push_back({s.file, s.line, std::move(message)});
  }
  void rec(const KaStatement& s, std::string_view block, std::string_view keyword,
           const std::string& detail = "") {
    record(report_, K, s.file, s.line, block, keyword, detail);
  }
  // A statement's one argument; an error (naming the keyword and what it takes) if absent.
  const std::string* arg(const KaStatement& s, const char* what) {
    if (s.args.empty()) {
      error(s, s.keyword + " needs " + what);
      return nullptr;
    }
    return &s.args[0];
  }
  std::optional<int64_t> timer(const KaStatement& s) {
    const std::string* a = arg(s, "a time in seconds");
    if (a == nullptr) return std::nullopt;
    auto v = timerMs(*a);
    if (!v || *v > 86400000) {
      error(s, s.keyword + " " + *a + ": not a time in seconds (as 3 or 1.5, up to a day)");
    }
    return v;
  }
  std::optional<int64_t> number(const KaStatement& s, int64_t lo, int64_t hi) {
    const std::string* a = arg(s, "a number");
    if (a == nullptr) return std::nullopt;
    auto v = integer(*a, lo, hi);
    if (!v) {
      error(s, s.keyword + " " + *a + ": not a number from " + std::to_string(lo) + " to " +
                   std::to_string(hi));
    }
    return v;
  }
  static size_t lineCount(const KaStatement& s) {
    size_t n = s.children.size();
    for (const auto& c : s.children) n += lineCount(c);
    return n;
  }
  // A statement tandem does not carry, with its block: one entry, the block's lines with it.
  void recBlock(const KaStatement& s, std::string_view block) {
    size_t n = lineCount(s);
    rec(s, block, s.keyword,
        n == 0 ? "" : "with its block of " + std::to_string(n) + " line" + (n == 1 ? "" : "s"));
  }

  void top(const KaStatement& s);

  void globalDef(const KaStatement& c);

  // keepalived's gratuitous ARP settings (garp_*), which become every VIP's announce_*; false
  // for another keyword.
  bool announce(const KaStatement& c, const std::string& garp);

  void notifyKey(const KaStatement& c, std::string_view block, const std::string& key);

  void instance(const KaStatement& s);

  void addInterface(const std::string& iface);

  // `ADDR[/LEN] [dev IF] [label L] [brd ...] [scope ...]`
  void vip(const KaStatement& a, const std::string& instance_iface, const std::string& block);

  void syncGroup(const KaStatement& s);

  void group(const KaStatement& s);

  // The timing keywords a virtual server, real server and checker share.
  bool timing(const KaStatement& c, Timing& t, std::string_view block);

  static void merge(Timing& into, const Timing& over);

  std::optional<std::string> forwarding(const KaStatement& c);

  std::optional<std::vector<ServiceSpec>> expandServices(const KaStatement& s);
  void virtualServer(const KaStatement& s);

  std::optional<RealSpec> realServer(const KaStatement& r, const Timing& vs_timing, bool& inhibit);

  CheckSpec check(const KaStatement& c, Timing t);

  void url(const KaStatement& u, CheckSpec& spec);

  // UDP_CHECK's hex strings: carried when they decode to printable text.
  void udpHex(const KaStatement& o, CheckSpec& spec);

  Report& report_;
  std::vector<ImportError>& errors_;
  Director d_;
  std::map<std::string, std::vector<GroupMember>> groups_;
  std::vector<std::string> flags_;
};

// The second director's differences from the first, into the report.
void compareDirectors(const Director& a, const Director& b, Report& report);
// The TOML: the first director's model, the second's node when given.
std::string render(const std::vector<Director>& ds, const ImportOptions& options,
                   const std::vector<std::string>& files);

}  // namespace tandem::importer::keepalived_import
