#pragma once

// The config loader's parts, shared by its files only (config_loader.cpp: the file, the root,
// the cluster, nodes and VIPs; config_loader_services.cpp: virtual and real servers, checks and
// routes; config_loader_sections.cpp: the other sections; config_loader_text.cpp: the checks on
// text). loadConfigText() (config_loader.h) is the way in.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/config_loader.h"
#include "config/config_validate.h"
#include "config/toml_reader.h"

namespace tandem::config::loading {

// text with its control characters written as \r, \n, \t or \xNN, so that a diagnostic
// quoting it stays one line.
std::string printable(std::string_view text);
// Why text cannot go into an HTTP request line or header (what: "path", "host"); nullopt if fine.
std::optional<std::string> httpTextProblem(std::string_view text, const char* what);
std::optional<std::string> hostHeaderProblem(std::string_view host);
std::optional<std::string> dnsNameProblem(std::string_view name);
// Why a POSIX extended regular expression does not compile; nullopt when it does.
std::optional<std::string> regexError(const std::string& pattern);
// Which check types each type-specific option belongs to.
const std::map<std::string, std::vector<CheckType>>& checkOptionOwners();

inline constexpr Millis kForever = Millis(int64_t{1} << 31);
extern const std::vector<std::string> kSchedulers;
extern const std::vector<std::string> kDnsTypes;
extern const std::vector<std::string> kDnsRcodes;
extern const std::vector<std::string> kLogLevels;

// A string, array or inline table that never closes, where it opens: toml++ reports such a
// defect where it notices it (the end of the line, or of the file, many lines on), which is not
// where the operator must look. Scans the text as TOML lexes it: comments, the four kinds of
// string, and brackets in value position (after '=' or inside an array or inline table; a '['
// that starts a line outside them is a table header).
struct Unclosed {
  int line = 0, column = 0;
  std::string what;  // "string", "multi-line string", "array", "inline table"
  char closer = 0;
};
std::optional<Unclosed> unclosedOpening(std::string_view text);

// toml++ 3.3 parses dotted keys recursively, and a key of tens of thousands of parts overflows
// the stack (fixed in 3.4). No tandem key has more than a handful, so refuse long ones before
// parsing: the line and column of the first dotted run outside a string that is too long.
inline constexpr int kMaxDottedParts = 64;
std::optional<std::pair<int, int>> tooManyDots(std::string_view text);

// Reads one file: the TOML parse, then each section into a Config, then the cross-checks.
class Loader {
 public:
  Loader(const std::string& source, const FileSystem& files) : files_(files) { ctx_.file = source; }

  LoadResult run(std::string_view text);

 private:
  void error(Position p, const std::string& msg);
  void warning(Position p, const std::string& msg);

  void readRoot(const toml::table& root, Config& cfg);

  void readCluster(TableReader r, Cluster& c);
  void readKeys(TableReader& r, Cluster& c);

  std::optional<Command> readCommand(TableReader& r, std::string_view key);

  Node readNode(TableReader& r);

  Vip readVip(TableReader& r);

  VirtualServer readVirtualServer(TableReader& r);

  std::optional<Forwarding> readForwarding(TableReader& r, std::string_view key);

  std::optional<IpAddress> readNetmask(TableReader& r, const toml::node& n, Family family);

  RealServer readRealServer(TableReader& r, const VirtualServer& vs);

  Check readCheck(TableReader& r, const Check& base);
  void readHttpOptions(TableReader& r, Check& c);

  static std::optional<StatusRange> parseStatusRange(const std::string& s);

  void readSync(TableReader r, Sync& s);

  ServiceRoute readServiceRoute(TableReader& r, const VirtualServer& vs);

  void readRoutes(TableReader& r, Routes& routes);

  void readIpvs(TableReader r, Ipvs& i);

  void readControl(TableReader r, Control& c);

  void readMetrics(TableReader r, Metrics& m);

  void readDaemon(TableReader r, Daemon& d);

  void readNotify(TableReader r, Notify& n);

  const FileSystem& files_;
  ReadContext ctx_;
  Positions pos_;
};

}  // namespace tandem::config::loading
