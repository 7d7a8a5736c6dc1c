#include "config/config_loader.h"

#include <regex.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <vector>

#include "common/text.h"
#include "config/config_validate.h"
#include "config/toml_reader.h"

namespace tandem::config {

namespace {

using namespace std::chrono_literals;

// text with its control characters written as \r, \n, \t or \xNN, so that a diagnostic
// quoting it stays one line.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// HTTP's request line and headers carry no white space or control characters inside a value:
// one would end the line early or smuggle another header in.
std::optional<std::string> httpTextProblem(std::string_view text, const char* what) {
  for (unsigned char c : text) {
    if (c <= 0x20 || c == 0x7f) {
      return "\"" + printable(text) + "\" holds " +
             (c == ' ' ? std::string("a space") : "a control character") + ", which " + what +
             " in an HTTP request cannot carry";
    }
  }
  return std::nullopt;
}

// A Host header: a name or an address, optionally with :port.
std::optional<std::string> hostHeaderProblem(std::string_view host) {
  if (host.empty()) return std::string("the Host header cannot be empty");
  if (auto why = httpTextProblem(host, "a Host header")) return why;
  for (unsigned char c : host) {
    if (!std::isalnum(c) &&
        std::string_view("-._:[]").find(static_cast<char>(c)) == std::string_view::npos) {
      return "\"" + printable(host) + "\" is not a host name or address (it holds '" +
             printable(std::string_view(reinterpret_cast<const char*>(&c), 1)) + "')";
    }
  }
  return std::nullopt;
}

// A domain name as DNS carries it: labels of 1 to 63 letters, digits, hyphens or underscores
// (SRV's _service), 253 characters at most, one trailing dot allowed.
std::optional<std::string> dnsNameProblem(std::string_view name) {
  std::string_view n = name;
  if (!n.empty() && n.back() == '.') n.remove_suffix(1);
  if (n.empty()) return std::string("the root alone is not a name to query");
  if (n.size() > 253) {
    return "\"" + printable(name) + "\" is longer than a domain name's 253 characters";
  }
  size_t start = 0;
  while (start <= n.size()) {
    size_t dot = n.find('.', start);
    if (dot == std::string_view::npos) dot = n.size();
    std::string_view label = n.substr(start, dot - start);
    if (label.empty()) return "\"" + printable(name) + "\" has an empty label (two dots)";
    if (label.size() > 63) {
      return "\"" + printable(name) + "\" has a label longer than 63 characters";
    }
    for (unsigned char c : label) {
      if (!std::isalnum(c) && c != '-' && c != '_') {
        return "\"" + printable(name) + "\" is not a domain name (it holds '" +
               printable(std::string_view(reinterpret_cast<const char*>(&c), 1)) + "')";
      }
    }
    start = dot + 1;
  }
  return std::nullopt;
}

constexpr Millis kForever = Millis(int64_t{1} << 31);

const std::vector<std::string> kSchedulers = {"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh",
                                              "sh", "sed", "nq", "mh",  "fo",   "ovf",   "twos"};
const std::vector<std::string> kDnsTypes = {"A",   "AAAA", "CNAME", "MX", "NS",
                                            "PTR", "SOA",  "SRV",   "TXT"};
const std::vector<std::string> kDnsRcodes = {"NOERROR",  "FORMERR", "SERVFAIL",
                                             "NXDOMAIN", "NOTIMP",  "REFUSED"};
const std::vector<std::string> kLogLevels = {"error", "warning", "notice", "info", "debug"};

// Why a POSIX extended regular expression does not compile; nullopt when it does. The checker
// compiles it the same way (regcomp, REG_EXTENDED | REG_NOSUB).
std::optional<std::string> regexError(const std::string& pattern) {
  regex_t re;
  int rc = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&re);
    return std::nullopt;
  }
  char buf[256];
  regerror(rc, &re, buf, sizeof buf);
  return std::string(buf);
}

// Which check types each type-specific option belongs to.
const std::map<std::string, std::vector<CheckType>>& checkOptionOwners() {
  static const std::map<std::string, std::vector<CheckType>> owners = {
      {"method", {CheckType::kHttp, CheckType::kHttps}},
      {"path", {CheckType::kHttp, CheckType::kHttps}},
      {"host", {CheckType::kHttp, CheckType::kHttps}},
      {"expect_status", {CheckType::kHttp, CheckType::kHttps}},
      {"expect_body", {CheckType::kHttp, CheckType::kHttps}},
      {"max_response", {CheckType::kHttp, CheckType::kHttps}},
      {"tls_verify", {CheckType::kHttps}},
      {"ca_file", {CheckType::kHttps}},
      {"payload", {CheckType::kUdp}},
      {"expect_reply", {CheckType::kUdp}},
      {"query_name", {CheckType::kDns}},
      {"query_type", {CheckType::kDns}},
      {"expect_rcode", {CheckType::kDns}},
      {"helo", {CheckType::kSmtp}},
      {"command", {CheckType::kExec}},
      {"tcp_reset", {CheckType::kTcp}},
      {"expect_body_regex", {CheckType::kHttp, CheckType::kHttps}},
      {"accept_silence", {CheckType::kUdp}},
      {"expect_answer", {CheckType::kDns}},
      {"exit_weight", {CheckType::kExec}},
      {"source_address",
       {CheckType::kTcp, CheckType::kHttp, CheckType::kHttps, CheckType::kUdp, CheckType::kDns,
        CheckType::kSmtp}},
  };
  return owners;
}

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

std::optional<Unclosed> unclosedOpening(std::string_view text) {
  int line = 1, col = 0;
  bool value = false;          // after '=' on this line, or inside [ ] or { }
  std::vector<Unclosed> open;  // the brackets in value position not yet closed
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    ++col;
    if (ch == '\n') {
      ++line;
      col = 0;
      if (open.empty()) value = false;
      continue;
    }
    if (ch == '#') {  // a comment runs to the end of the line
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i, ++col;
      continue;
    }
    if (ch == '"' || ch == '\'') {
      const int at_line = line, at_col = col;
      if (text.substr(i, 3) == std::string(3, ch)) {  // multi-line: runs to the same triple
        const size_t end = text.find(std::string(3, ch), i + 3);
        if (end == std::string_view::npos) {
          return Unclosed{at_line, at_col, "multi-line string", ch};
        }
        for (size_t k = i; k < end + 2; ++k) {
          ++col;
          if (text[k] == '\n') ++line, col = 0;
        }
        i = end + 2;
        continue;
      }
      size_t k = i + 1;
      for (; k < text.size() && text[k] != ch && text[k] != '\n'; ++k) {
        if (ch == '"' && text[k] == '\\' && k + 1 < text.size() && text[k + 1] != '\n') ++k;
      }
      if (k >= text.size() || text[k] == '\n') return Unclosed{at_line, at_col, "string", ch};
      col += static_cast<int>(k - i);
      i = k;
      continue;
    }
    if (ch == '=') {
      value = true;
    } else if (value && (ch == '[' || ch == '{')) {
      open.push_back(
          Unclosed{line, col, ch == '[' ? "array" : "inline table", ch == '[' ? ']' : '}'});
    } else if (!open.empty() && ch == open.back().closer) {
      open.pop_back();
    }
  }
  if (!open.empty()) return open.front();
  return std::nullopt;
}

// toml++ 3.3 parses dotted keys recursively, and a key of tens of thousands of parts overflows
// the stack (fixed in 3.4). No tandem key has more than a handful, so refuse long ones before
// parsing: the line and column of the first dotted run outside a string that is too long.
constexpr int kMaxDottedParts = 64;

std::optional<std::pair<int, int>> tooManyDots(std::string_view text) {
  int line = 1, col = 0, dots = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    ++col;
    if (ch == '\n') {
      ++line;
      col = 0;
      dots = 0;
      if (quote == '\'' || quote == '"') quote = 0;  // single-line strings end with the line
      continue;
    }
    if (quote) {
      if (ch == '\\' && quote == '"')
        ++i, ++col;
      else if (ch == quote)
        quote = 0;
      continue;
    }
    if (ch == '"' || ch == '\'')
      quote = ch;
    else if (ch == '#')
      quote = '\n';  // a comment runs to the end of the line
    else if (ch == '.' && ++dots > kMaxDottedParts)
      return std::make_pair(line, col);
  }
  return std::nullopt;
}

class Loader {
 public:
  Loader(const std::string& source, const FileSystem& files) : files_(files) { ctx_.file = source; }

  LoadResult run(std::string_view text) {
    LoadResult out;
    if (auto bad = text.find('\0'); bad != std::string_view::npos) {
      // toml++ would stop here too, but naming the problem helps more than "unexpected char".
      int line = 1 + static_cast<int>(
                         std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n'));
      ctx_.diags.error(ctx_.file, line, 1,
                       "the file holds binary data (a NUL byte at offset " + std::to_string(bad) +
                           "); a config is UTF-8 text in TOML");
      out.diagnostics = std::move(ctx_.diags);
      return out;
    }
    if (auto deep = tooManyDots(text)) {
      ctx_.diags.error(ctx_.file, deep->first, deep->second,
                       "a key with more than " + std::to_string(kMaxDottedParts) +
                           " dotted parts; tandem's keys nest at most four deep, so this is not "
                           "a tandem config");
      out.diagnostics = std::move(ctx_.diags);
      return out;
    }
    toml::table root;
    try {
      root = toml::parse(text, ctx_.file);
    } catch (const toml::parse_error& e) {
      Position p = positionOf(e.source());
      // toml++ notices a construct that never closes late: as a line ending inside a string
      // ("control characters"), as the end of the file, or as whatever follows an array that
      // runs on into the next table. It is the defect when toml++ says one of the first two, or
      // when it opened on an earlier line; otherwise (nesting too deep on one line, a bad
      // character) toml++'s own words stand.
      const std::string_view said = e.description();
      const bool symptom = said.find("end-of-file") != std::string_view::npos ||
                           said.find("control characters") != std::string_view::npos;
      const auto unclosed = unclosedOpening(text);
      if (unclosed && (unclosed->line < p.line ||
                       (symptom && unclosed->line == p.line && unclosed->column <= p.column))) {
        // Reported where it opens: that is where the defect is, and toml++'s words for it
        // ("unescaped control characters", "end-of-file") do not say what is missing.
        ctx_.diags.error(
            ctx_.file, unclosed->line, unclosed->column,
            "this " + unclosed->what + " is never closed; end it with " +
                (unclosed->what == "multi-line string" ? std::string(3, unclosed->closer)
                                                       : std::string(1, unclosed->closer)) +
                (unclosed->what == "string" ? " on the same line" : ""));
      } else {
        ctx_.diags.error(ctx_.file, p.line, p.column,
                         "TOML syntax error: " + std::string(e.description()) +
                             "; see https://toml.io for the syntax");
      }
      out.diagnostics = std::move(ctx_.diags);
      return out;
    }
    Config cfg;
    cfg.source = ctx_.file;
    readRoot(root, cfg);
    crossCheck(cfg, pos_, files_,
               ctx_);  // also after local errors: all findings at once, not one per run
    out.known_keys = std::move(ctx_.known_keys);
    out.diagnostics = std::move(ctx_.diags);
    if (!out.diagnostics.hasErrors()) out.config = std::move(cfg);
    return out;
  }

 private:
  void error(Position p, const std::string& msg) {
    ctx_.diags.error(ctx_.file, p.line, p.column, msg);
  }
  void warning(Position p, const std::string& msg) {
    ctx_.diags.warning(ctx_.file, p.line, p.column, msg);
  }

  void readRoot(const toml::table& root, Config& cfg) {
    TableReader r(root, "", ctx_);
    if (const toml::table* t = r.table("cluster")) {
      readCluster(TableReader(*t, "cluster", ctx_), cfg.cluster);
    } else if (!r.has("cluster")) {
      error(Position{}, "the file has no [cluster] table; add one with at least name = \"...\"");
    }
    for (const toml::table* t : r.tables("node")) {
      TableReader nr(*t, "node", ctx_, true);
      pos_.nodes.push_back(nr.where());
      cfg.nodes.push_back(readNode(nr));
    }
    if (cfg.nodes.empty() && !r.has("node")) {
      error(Position{},
            "the file has no [[node]] table; add one [[node]] per director, "
            "each with name = \"...\" as in corosync.conf");
    }
    for (const toml::table* t : r.tables("vip")) {
      TableReader vr(*t, "vip", ctx_, true);
      int before = ctx_.diags.errorCount();
      cfg.vips.push_back(readVip(vr));
      pos_.vips.push_back({vr.where(), vr.where("address"), vr.where("interface"),
                           ctx_.diags.errorCount() == before});
    }
    for (const toml::table* t : r.tables("virtual_server")) {
      TableReader vr(*t, "virtual_server", ctx_, true);
      cfg.virtual_servers.push_back(readVirtualServer(vr));
    }
    if (const toml::table* t = r.table("sync")) readSync(TableReader(*t, "sync", ctx_), cfg.sync);
    if (const toml::table* t = r.table("ipvs")) readIpvs(TableReader(*t, "ipvs", ctx_), cfg.ipvs);
    if (const toml::table* t = r.table("control")) {
      readControl(TableReader(*t, "control", ctx_), cfg.control);
    }
    if (const toml::table* t = r.table("metrics")) {
      readMetrics(TableReader(*t, "metrics", ctx_), cfg.metrics);
    }
    if (const toml::table* t = r.table("daemon")) {
      readDaemon(TableReader(*t, "daemon", ctx_), cfg.daemon);
    }
    if (const toml::table* t = r.table("notify")) {
      readNotify(TableReader(*t, "notify", ctx_), cfg.notify);
    }
    if (const toml::table* t = r.table("route")) {
      TableReader rr(*t, "route", ctx_);
      readRoutes(rr, cfg.routes);
      pos_.routes = rr.where();
    }
    r.finish([](const std::string& key) -> std::string {
      if (key == "real_server") {
        return "a real_server outside any virtual server; write it as "
               "[[virtual_server.real_server]] after the [[virtual_server]] it belongs to";
      }
      if (key == "check") {
        return "a check outside any virtual server; write it as [virtual_server.check] or "
               "[virtual_server.real_server.check]";
      }
      if (key == "nodes" || key == "vips" || key == "virtual_servers") {
        return "unknown key \"" + key + "\" at the top level; did you mean \"" +
               key.substr(0, key.size() - 1) + "\"? Each one is its own [[" +
               key.substr(0, key.size() - 1) + "]] table";
      }
      return {};
    });
  }

  void readCluster(TableReader r, Cluster& c) {
    pos_.cluster = r.where();
    if (auto v = r.string("name", true)) {
      if (v->empty()) r.badValue("name", "the name is empty", "give the cluster a name");
      c.name = *v;
    }
    if (auto v = r.string("group")) {
      if (v->empty() || v->size() > 127) {
        r.badValue("group", "\"" + *v + "\" is not a usable CPG group name",
                   "it must be 1 to 127 characters");
      } else {
        c.group = *v;
      }
    }
    auto keys = r.tables("key");
    std::set<uint32_t> ids;
    for (const toml::table* t : keys) {
      TableReader kr(*t, "cluster.key", ctx_, true);
      AuthKey k;
      auto id = kr.integer("id", 1, 65535);
      if (id) {
        k.id = static_cast<uint32_t>(*id);
      } else if (!kr.has("id")) {
        Position p = kr.where();
        error(p, "[[cluster.key]] has no id; it is required, add id = 1 (1 to 65535)");
      }
      // A key comes from a file or from a systemd credential: exactly one of the two.
      const bool by_credential = kr.has("credential");
      auto file = by_credential ? kr.string("file") : kr.string("file", true);
      auto credential = kr.string("credential");
      if (file && file->empty()) {
        kr.badValue("file", "the path is empty", "name the key file, e.g. \"/etc/tandem/authkey\"");
      }
      if (file && credential) {
        kr.badValue("credential", "a key has either a file or a credential, this one has both",
                    "keep file = ... for a key on disk, or credential = ... for one the unit "
                    "loads with LoadCredential= or LoadCredentialEncrypted=");
        credential.reset();
      }
      if (credential) {
        if (auto why = credentialNameProblem(*credential)) {
          kr.badValue("credential", *why,
                      "name the credential as the unit's LoadCredential= does, e.g. "
                      "\"tandem.authkey\"");
          credential.reset();
        }
      }
      if (id && !ids.insert(k.id).second) {
        kr.badValue("id", "key id " + std::to_string(k.id) + " is used twice",
                    "each [[cluster.key]] needs its own id");
      }
      kr.finish();
      if (credential) {
        k.credential = *credential;
        pos_.keys.push_back(kr.where("credential"));
        c.keys.push_back(k);
        continue;
      }
      if (!file || file->empty()) continue;  // already reported; nothing to check on disk
      k.file = *file;
      pos_.keys.push_back(kr.where("file"));
      c.keys.push_back(k);
    }
    if (keys.empty()) {
      c.keys.push_back(AuthKey{1, "/etc/tandem/authkey", ""});
      pos_.keys.push_back(r.where());
    }
    if (auto v = r.integer("active_key", 1, 65535)) {
      c.active_key = static_cast<uint32_t>(*v);
      if (!keys.empty() && !ids.count(c.active_key)) {
        r.badValue("active_key", "no [[cluster.key]] has id " + std::to_string(*v),
                   "it must name one of the configured key ids");
      }
      if (keys.empty() && c.active_key != 1) {
        r.badValue("active_key", "no [[cluster.key]] has id " + std::to_string(*v),
                   "without [[cluster.key]] tables the only key is id 1 (/etc/tandem/authkey)");
      }
    } else if (keys.size() > 1 && !r.has("active_key")) {
      Position p = r.where();
      error(p,
            "[cluster] has several [[cluster.key]] tables but no active_key; add "
            "active_key = <id> to say which one signs outgoing frames");
    } else if (keys.size() == 1 && !c.keys.empty()) {
      c.active_key = c.keys.front().id;
    }
    if (auto v = r.duration("heartbeat_interval", 10ms, 10s)) c.heartbeat_interval = *v;
    if (auto v = r.duration("dead_time", 20ms, 60s)) c.dead_time = *v;
    if (c.dead_time < 2 * c.heartbeat_interval) {
      r.badValue(r.has("dead_time") ? "dead_time" : "heartbeat_interval",
                 "dead_time " + formatDuration(c.dead_time) + " is shorter than two heartbeats (" +
                     formatDuration(c.heartbeat_interval) + " each)",
                 "dead_time must be at least 2 x heartbeat_interval, or one late frame makes a "
                 "takeover");
    }
    if (auto v = r.integer("heartbeat_port", 1, 65535))
      c.heartbeat_port = static_cast<uint16_t>(*v);
    // The CPG path alone must keep a peer alive when the UDP path is blocked: two of its
    // heartbeats fit in dead_time, so one late delivery is not a takeover.
    const Millis group_most = c.dead_time / 2;
    c.group_heartbeat_interval = std::min(Millis(1000), group_most);
    if (auto v = r.duration("group_heartbeat_interval", 100ms, 1min)) {
      c.group_heartbeat_interval = *v;
      if (*v > group_most) {
        r.badValue("group_heartbeat_interval",
                   formatDuration(*v) + " is longer than half of dead_time (" +
                       formatDuration(c.dead_time) +
                       "), so with the UDP path blocked a peer would be declared dead between "
                       "two of its CPG heartbeats",
                   "set it to at most " + formatDuration(group_most) +
                       ", or leave it out: it defaults to half of dead_time, at most 1s");
      } else if (*v < c.heartbeat_interval) {
        r.warnValue("group_heartbeat_interval",
                    "it is shorter than heartbeat_interval, so Corosync carries more than the "
                    "fast path",
                    "keep it at or above heartbeat_interval; each CPG message costs the ring");
      }
    }
    if (auto v = r.choice<FailbackPolicy>("failback", {{"auto", FailbackPolicy::kAuto},
                                                       {"manual", FailbackPolicy::kManual},
                                                       {"delayed", FailbackPolicy::kDelayed}})) {
      c.failback = *v;
    }
    if (auto v = r.choice<NoQuorumPolicy>(
            "no_quorum_policy",
            {{"stop", NoQuorumPolicy::kStop}, {"ignore", NoQuorumPolicy::kIgnore}})) {
      c.no_quorum_policy = *v;
    }
    if (auto v = r.duration("quorum_hold", 0ms, 60s)) c.quorum_hold = *v;
    auto delay = r.duration("failback_delay", 0ms, 24h);
    if (delay) c.failback_delay = *delay;
    bool delay_broken = r.has("failback_delay") && !delay;
    if (c.failback == FailbackPolicy::kDelayed && c.failback_delay == 0ms && !delay_broken) {
      r.badValue(r.has("failback_delay") ? "failback_delay" : "failback",
                 "failback = \"delayed\" needs a delay",
                 "set failback_delay to more than \"0s\", e.g. \"5m\"");
    }
    if (c.failback == FailbackPolicy::kManual && r.has("failback_delay")) {
      r.warnValue("failback_delay", "it has no effect with failback = \"manual\"",
                  "remove it, or choose failback = \"auto\" or \"delayed\"");
    }
    if (const toml::table* t = r.table("tiebreaker")) {
      TableReader tr(*t, "cluster.tiebreaker", ctx_);
      pos_.tiebreaker = tr.where();
      if (auto v = tr.addresses("targets")) {
        c.tiebreaker.targets = *v;
        if (v->empty()) {
          tr.badValue("targets", "the list is empty",
                      "name at least one address to ping, or remove [cluster.tiebreaker]");
        }
      } else if (!tr.has("targets")) {
        error(tr.where(), "[cluster.tiebreaker] has no targets; add targets = [\"<gateway>\"]");
      }
      if (auto v = tr.duration("interval", 100ms, 1min)) c.tiebreaker.interval = *v;
      if (auto v = tr.duration("timeout", 10ms, 1min)) c.tiebreaker.timeout = *v;
      tr.finish();
    }
    if (const toml::table* t = r.table("fence")) {
      TableReader fr(*t, "cluster.fence", ctx_);
      c.fence.command = readCommand(fr, "command");
      if (!fr.has("command")) {
        error(fr.where(),
              "[cluster.fence] has no command; add command = [\"/path/to/fence\", "
              "\"arg\"], or remove [cluster.fence]");
      }
      if (auto v = fr.duration("timeout", 1s, 10min)) c.fence.timeout = *v;
      fr.finish();
    }
    r.finish();
  }

  std::optional<Command> readCommand(TableReader& r, std::string_view key) {
    const toml::node* n = r.raw(key);
    if (!n) return std::nullopt;
    Command cmd;
    if (n->is_string()) {
      cmd.argv = {*n->value<std::string>()};
      cmd.via_shell = true;
    } else if (const toml::array* a = n->as_array()) {
      for (const toml::node& e : *a) {
        if (!e.is_string()) {
          r.badValue(key, "an argument is " + std::string(tomlTypeName(e)),
                     "every element of the argv array must be a string");
          return std::nullopt;
        }
        cmd.argv.push_back(*e.value<std::string>());
      }
    } else {
      r.badValue(key, "it is " + std::string(tomlTypeName(*n)),
                 "write a shell line (\"cmd arg\") or an argv array ([\"/path/cmd\", \"arg\"])");
      return std::nullopt;
    }
    if (cmd.argv.empty() || cmd.argv.front().empty()) {
      r.badValue(key, "the command is empty", "name the program to run");
      return std::nullopt;
    }
    if (!cmd.via_shell && cmd.argv.front().front() != '/') {
      r.badValue(key, "\"" + cmd.argv.front() + "\" is not an absolute path",
                 "an argv command starts with the program's full path; tandemd does not "
                 "search PATH");
      return std::nullopt;
    }
    return cmd;
  }

  Node readNode(TableReader& r) {
    Node n;
    if (auto v = r.string("name", true)) {
      if (v->empty())
        r.badValue("name", "the name is empty", "use the node's name in corosync.conf");
      n.name = *v;
    }
    if (auto v = r.integer("priority", 0, 255)) n.priority = static_cast<int>(*v);
    if (auto v = r.integer("route_metric", 1, UINT32_MAX))
      n.route_metric = static_cast<uint32_t>(*v);
    n.address = r.address("address");
    if (auto v = r.strings("interfaces")) {
      std::set<std::string> seen;
      for (const auto& i : *v) {
        if (auto why = interfaceNameProblem(i)) {
          r.badValue("interfaces", *why, "name the interface as `ip link` shows it");
        } else if (!seen.insert(i).second) {
          r.badValue("interfaces", "\"" + i + "\" is listed twice", "list each interface once");
        }
      }
      n.interfaces = *v;
    }
    r.finish();
    return n;
  }

  Vip readVip(TableReader& r) {
    Vip v;
    if (auto s = r.string("address", true)) {
      if (auto p = IpPrefix::parse(*s)) {
        v.address = *p;
      } else if (auto bare = IpAddress::parse(*s)) {
        r.badValue("address", "\"" + *s + "\" has no prefix length",
                   "write address/prefix, e.g. \"" + *s +
                       (bare->family == Family::kInet ? "/24" : "/64") + "\"");
      } else {
        r.badValue("address", "\"" + *s + "\" is not an address/prefix",
                   "write e.g. \"198.51.100.10/24\" or \"2001:db8::10/64\"");
      }
    }
    if (auto s = r.string("interface", true)) {
      v.interface = *s;
      if (auto why = interfaceNameProblem(*s)) {
        r.badValue("interface", *why, "name the interface as `ip link` shows it");
      }
    }
    if (auto s = r.string("label")) {
      if (v.address.address.family == Family::kInet6) {
        r.badValue("label", "IPv6 addresses have no label", "remove label from this VIP");
      } else if (s->size() > 15 || s->rfind(v.interface, 0) != 0) {
        r.badValue("label", "\"" + *s + "\" cannot label an address on " + v.interface,
                   "the kernel wants a label that starts with the interface name and has at "
                   "most 15 characters, e.g. \"" +
                       v.interface + ":vip\"");
      } else {
        v.label = *s;
      }
    }
    if (auto n = r.integer("announce_count", 0, 100)) v.announce_count = static_cast<int>(*n);
    if (auto d = r.duration("announce_interval", 10ms, 10s)) v.announce_interval = *d;
    if (auto d = r.duration("announce_second_burst", 0ms, 1h)) v.announce_second_burst = *d;
    if (auto d = r.duration("announce_refresh", 0ms, 24h)) {
      v.announce_refresh = *d;
      if (*d > 0ms && *d < 1s) {
        r.badValue("announce_refresh", "\"" + formatDuration(*d) + "\" would flood the segment",
                   "use \"0s\" (off) or at least \"1s\"");
      }
    }
    if (auto a = r.addresses("verify_neighbors")) {
      for (const auto& n : *a) {
        if (n.family != v.address.address.family) {
          r.badValue("verify_neighbors",
                     std::string(familyName(n.family)) + " neighbour " + n.toString() +
                         " cannot be probed from an " +
                         std::string(familyName(v.address.address.family)) + " VIP",
                     "list neighbours of the VIP's own family");
        }
      }
      v.verify_neighbors = *a;
    }
    r.finish();
    return v;
  }

  VirtualServer readVirtualServer(TableReader& r) {
    VirtualServer vs;
    VsPos pos;
    pos.table = r.where();
    bool has_addr = r.has("address");
    bool has_mark = r.has("fwmark");
    if (auto s = r.string("address")) {
      auto e = Endpoint::parse(*s, false);
      if (!e) {
        r.badValue("address", "\"" + *s + "\": " + endpointProblem(*s, false),
                   "write e.g. \"198.51.100.10:80\" or \"[2001:db8::10]:443\"");
      }
      vs.address = e;
      pos.address = r.where("address");
    }
    if (auto m = r.integer("fwmark", 1, 0xffffffffLL)) {
      vs.fwmark = static_cast<uint32_t>(*m);
      pos.address = r.where("fwmark");
    }
    if (has_addr && has_mark) {
      r.badValue("fwmark", "a virtual server has both address and fwmark",
                 "use address = \"ip:port\" or fwmark = N, not both");
    } else if (!has_addr && !has_mark) {
      error(r.where(),
            "[[virtual_server]] has neither address nor fwmark; add "
            "address = \"ip:port\" or fwmark = N");
    }
    if (auto f = r.choice<Family>("family", {{"ipv4", Family::kInet}, {"ipv6", Family::kInet6}})) {
      vs.fwmark_family = *f;
      if (!has_mark) {
        r.badValue("family", "family applies only to fwmark services",
                   "remove it; an address service takes its family from the address");
      }
    }
    if (auto p = r.choice<Protocol>(
            "protocol",
            {{"tcp", Protocol::kTcp}, {"udp", Protocol::kUdp}, {"sctp", Protocol::kSctp}})) {
      vs.protocol = *p;
      if (has_mark) {
        r.badValue("protocol", "a fwmark service matches every protocol the mark covers",
                   "remove protocol from this fwmark service");
      }
    }
    vs.name = r.string("name").value_or("");
    if (vs.name.empty()) {
      vs.name = vs.address ? vs.address->toString()
                           : (vs.fwmark ? "fwmark:" + std::to_string(*vs.fwmark) : "?");
    }
    bool scheduler_ok = !r.has("scheduler");  // the default is fine; a given one must read
    if (auto s = r.string("scheduler")) {
      if (std::find(kSchedulers.begin(), kSchedulers.end(), *s) == kSchedulers.end()) {
        auto m = closestMatch(*s, kSchedulers);
        r.badValue("scheduler", "\"" + *s + "\" is not an IPVS scheduler",
                   (m ? "did you mean \"" + *m + "\"? " : std::string()) + "use one of " +
                       quotedAlternatives(kSchedulers));
      } else {
        vs.scheduler = *s;
        scheduler_ok = true;
      }
    }
    if (auto flags = r.strings("scheduler_flags")) {
      if (scheduler_ok && vs.scheduler != "sh" && vs.scheduler != "mh") {
        r.badValue("scheduler_flags", "only the sh and mh schedulers take flags",
                   "remove scheduler_flags, or use scheduler = \"sh\" or \"mh\"");
      }
      for (const auto& f : *flags) {
        if (f != "fallback" && f != "port") {
          r.badValue("scheduler_flags", "\"" + f + "\" is not a scheduler flag",
                     "use \"fallback\" and/or \"port\"");
        }
      }
      vs.scheduler_flags = *flags;
    }
    if (auto f = readForwarding(r, "forwarding")) vs.forwarding = *f;
    if (auto d = r.duration("persistence_timeout", 0ms, 24h * 24)) {
      vs.persistence_timeout = *d;
      if (d->count() % 1000 != 0) {
        r.badValue("persistence_timeout",
                   "IPVS keeps the persistence timeout in whole seconds, so " + formatDuration(*d) +
                       " would be cut to " +
                       formatDuration(std::chrono::duration_cast<std::chrono::seconds>(*d)),
                   "write a whole number of seconds, e.g. \"600s\" or \"10m\"");
      }
    }
    if (const toml::node* n = r.raw("persistence_netmask")) {
      vs.persistence_netmask = readNetmask(r, *n, vs.family());
      if (vs.persistence_timeout == 0ms) {
        r.warnValue("persistence_netmask", "it has no effect without persistence_timeout",
                    "set persistence_timeout, or remove persistence_netmask");
      }
    }
    if (auto b = r.boolean("one_packet")) {
      vs.one_packet = *b;
      // A fwmark service may carry UDP; the kernel applies one-packet scheduling to its UDP.
      if (*b && vs.address && vs.protocol != Protocol::kUdp) {
        r.badValue("one_packet", "one-packet scheduling is for UDP services",
                   "remove it, or use protocol = \"udp\"");
      }
    }
    if (auto f = r.choice<OnFailure>(
            "on_failure", {{"quiescent", OnFailure::kQuiescent}, {"remove", OnFailure::kRemove}})) {
      vs.on_failure = *f;
    }
    if (auto s = r.string("fallback")) {
      if (auto e = Endpoint::parse(*s, true)) {
        if (e->port == 0 && vs.address) e->port = vs.address->port;  // like a real server
        vs.fallback = e;
        pos.fallback = r.where("fallback");
      } else {
        r.badValue("fallback", "\"" + *s + "\": " + endpointProblem(*s, true),
                   "write the sorry server as e.g. \"127.0.0.1:80\"");
      }
    }
    if (auto d = r.duration("slow_start", 0ms, 1h)) vs.slow_start = *d;
    vs.notify = readCommand(r, "notify");
    if (auto d = r.duration("notify_timeout", 100ms, 10min)) vs.notify_timeout = *d;
    if (const toml::table* t = r.table("check")) {
      TableReader cr(*t, "virtual_server.check", ctx_);
      vs.check = readCheck(cr, Check{});
    }
    if (const toml::table* t = r.table("route")) {
      TableReader rr(*t, "virtual_server.route", ctx_);
      vs.route = readServiceRoute(rr, vs);
      pos.route = rr.where();
    }
    for (const toml::table* t : r.tables("real_server")) {
      TableReader rr(*t, "virtual_server.real_server", ctx_, true);
      int before = ctx_.diags.errorCount();
      vs.real_servers.push_back(readRealServer(rr, vs));
      pos.reals.push_back(
          {rr.where("address"), rr.where("forwarding"), ctx_.diags.errorCount() == before});
    }
    pos.ok = vs.address.has_value() != vs.fwmark.has_value();
    r.finish();
    pos_.virtual_servers.push_back(pos);
    return vs;
  }

  std::optional<Forwarding> readForwarding(TableReader& r, std::string_view key) {
    return r.choice<Forwarding>(
        key, {{"nat", Forwarding::kNat}, {"dr", Forwarding::kDr}, {"tun", Forwarding::kTun}});
  }

  std::optional<IpAddress> readNetmask(TableReader& r, const toml::node& n, Family family) {
    if (family == Family::kInet6) {
      if (!n.is_integer() || *n.value<int64_t>() < 1 || *n.value<int64_t>() > 128) {
        r.badValue("persistence_netmask", "an IPv6 service takes a prefix length",
                   "write an integer from 1 to 128, e.g. persistence_netmask = 64");
        return std::nullopt;
      }
      int len = static_cast<int>(*n.value<int64_t>());
      IpAddress mask;
      mask.family = Family::kInet6;
      for (int i = 0; i < len; ++i) {
        mask.bytes[static_cast<size_t>(i / 8)] |= static_cast<uint8_t>(0x80 >> (i % 8));
      }
      return mask;
    }
    if (!n.is_string()) {
      r.badValue("persistence_netmask", "it is " + std::string(tomlTypeName(n)),
                 "an IPv4 service takes a netmask string, e.g. \"255.255.255.0\"");
      return std::nullopt;
    }
    std::string s = *n.value<std::string>();
    auto m = IpAddress::parse(s);
    if (!m || m->family != Family::kInet || !netmaskLength(*m)) {
      r.badValue("persistence_netmask", "\"" + s + "\" is not a netmask",
                 "a netmask is contiguous ones then zeros, e.g. \"255.255.255.0\"");
      return std::nullopt;
    }
    return m;
  }

  RealServer readRealServer(TableReader& r, const VirtualServer& vs) {
    RealServer rs;
    rs.forwarding = vs.forwarding;
    if (auto s = r.string("address", true)) {
      if (auto e = Endpoint::parse(*s, true)) {
        rs.address = *e;
        if (rs.address.port == 0 && vs.address) rs.address.port = vs.address->port;
      } else {
        r.badValue("address", "\"" + *s + "\": " + endpointProblem(*s, true),
                   "write e.g. \"198.51.100.21:80\", or the address alone to use the "
                   "service's port");
      }
    }
    if (auto w = r.integer("weight", 0, 65535)) rs.weight = static_cast<int>(*w);
    // The kernel takes thresholds up to INT_MAX (EINVAL above) and refuses lower > upper
    // (ERANGE) even when upper is 0, "unlimited": both measured in the VM lab.
    if (auto v = r.integer("upper_threshold", 0, 0x7fffffffLL)) {
      rs.upper_threshold = static_cast<uint32_t>(*v);
    }
    if (auto v = r.integer("lower_threshold", 0, 0x7fffffffLL)) {
      rs.lower_threshold = static_cast<uint32_t>(*v);
    }
    if (rs.lower_threshold > rs.upper_threshold) {
      r.badValue("lower_threshold",
                 rs.upper_threshold == 0 ? "it is set without an upper_threshold"
                                         : "it is above upper_threshold",
                 "the kernel needs upper_threshold set and at least lower_threshold (" +
                     std::to_string(rs.lower_threshold) + ")");
    }
    if (auto f = readForwarding(r, "forwarding")) rs.forwarding = *f;
    bool tun = rs.forwarding == Forwarding::kTun;
    if (auto t = r.choice<TunnelType>(
            "tunnel_type",
            {{"ipip", TunnelType::kIpip}, {"gue", TunnelType::kGue}, {"gre", TunnelType::kGre}})) {
      rs.tunnel_type = *t;
    }
    auto tunnel_port = r.integer("tunnel_port", 1, 65535);
    if (tunnel_port) rs.tunnel_port = static_cast<uint16_t>(*tunnel_port);
    if (auto b = r.boolean("tunnel_checksum")) rs.tunnel_checksum = *b;
    for (const char* k : {"tunnel_type", "tunnel_port", "tunnel_checksum"}) {
      if (r.has(k) && !tun) {
        r.badValue(k, "tunnel options need tun forwarding",
                   "remove " + std::string(k) + ", or set forwarding = \"tun\"");
      }
    }
    if (tun && rs.tunnel_type == TunnelType::kGue && rs.tunnel_port == 0 && !r.has("tunnel_port")) {
      r.badValue(r.has("tunnel_type") ? "tunnel_type" : "forwarding",
                 "a GUE tunnel needs a UDP port", "add tunnel_port = N");
    }
    if (const toml::table* t = r.table("check")) {
      TableReader cr(*t, "virtual_server.real_server.check", ctx_);
      rs.check = readCheck(cr, vs.check);
    } else {
      rs.check = vs.check;
    }
    r.finish();
    return rs;
  }

  Check readCheck(TableReader& r, const Check& base) {
    Check c = base;
    if (auto t = r.choice<CheckType>("type", {{"none", CheckType::kNone},
                                              {"tcp", CheckType::kTcp},
                                              {"http", CheckType::kHttp},
                                              {"https", CheckType::kHttps},
                                              {"udp", CheckType::kUdp},
                                              {"dns", CheckType::kDns},
                                              {"smtp", CheckType::kSmtp},
                                              {"exec", CheckType::kExec}})) {
      c.type = *t;
    }
    if (auto d = r.duration("interval", 100ms, 1h)) c.interval = *d;
    if (auto d = r.duration("timeout", 10ms, 10min)) c.timeout = *d;
    if (auto n = r.integer("rise", 1, 100)) c.rise = static_cast<int>(*n);
    if (auto n = r.integer("fall", 1, 100)) c.fall = static_cast<int>(*n);
    if (auto i = r.choice<InitialHealth>("initial", {{"up", InitialHealth::kUp},
                                                     {"down", InitialHealth::kDown},
                                                     {"rise", InitialHealth::kDownUntilRise}})) {
      c.initial = *i;
    }
    if (auto n = r.integer("port", 1, 65535)) c.port = static_cast<uint16_t>(*n);

    auto owns = [&](const std::string& key) {
      const auto& types = checkOptionOwners().at(key);
      return std::find(types.begin(), types.end(), c.type) != types.end();
    };
    // Type options are read only where they apply; elsewhere finish() explains why not.
    if (owns("method")) {
      if (auto m = r.choice<HttpMethod>("method",
                                        {{"GET", HttpMethod::kGet}, {"HEAD", HttpMethod::kHead}})) {
        c.method = *m;
      }
      if (auto s = r.string("path")) {
        if (s->empty() || s->front() != '/') {
          r.badValue("path", "\"" + *s + "\" is not an absolute path",
                     "the HTTP path starts with /, e.g. \"/index.html\"");
        } else if (auto why = httpTextProblem(*s, "a path")) {
          r.badValue("path", *why, "percent-encode it, e.g. %20 for a space");
        }
        c.path = *s;
      }
      if (auto s = r.string("host")) {
        if (auto why = hostHeaderProblem(*s)) {
          r.badValue("host", *why, "write a host name or address, e.g. \"www.example.com\"");
        }
        c.host = *s;
      }
      if (auto list = r.strings("expect_status")) {
        c.expect_status.clear();
        for (const auto& s : *list) {
          if (auto range = parseStatusRange(s)) {
            c.expect_status.push_back(*range);
          } else {
            r.badValue("expect_status", "\"" + s + "\" is not a status code or range",
                       "write codes from 100 to 599 as \"200\" or \"200-399\"");
          }
        }
        if (list->empty()) {
          r.badValue("expect_status", "the list is empty",
                     "name at least one healthy status, e.g. [\"200-399\"]");
        }
      }
      if (auto s = r.string("expect_body")) c.expect_body = *s;
      if (auto s = r.string("expect_body_regex")) {
        if (auto bad = regexError(*s)) {
          r.badValue("expect_body_regex", "\"" + *s + "\" is not a regular expression: " + *bad,
                     "write a POSIX extended regular expression, e.g. \"status: (ok|ready)\"");
        } else {
          c.expect_body_regex = *s;
        }
      }
      if (auto n = r.integer("max_response", 256, 16777216)) {
        c.max_response = static_cast<uint32_t>(*n);
      }
    }
    if (owns("tls_verify")) {
      if (auto b = r.boolean("tls_verify")) c.tls_verify = *b;
      if (auto s = r.string("ca_file")) {
        // tandemd runs in / (daemonize, systemd): a relative path would name another file for
        // it than for `tandem config verify` run elsewhere.
        if (!s->empty() && s->front() != '/') {
          r.badValue("ca_file", "\"" + *s + "\" is not an absolute path",
                     "name the PEM file from /, e.g. \"/etc/tandem/real-servers-ca.pem\"");
        }
        c.ca_file = *s;
      }
    }
    if (owns("payload")) {
      if (auto s = r.string("payload")) c.payload = *s;
      if (auto s = r.string("expect_reply")) c.expect_reply = *s;
      if (auto b = r.boolean("accept_silence")) c.accept_silence = *b;
    }
    if (owns("query_name")) {
      if (auto s = r.string("query_name")) {
        if (auto why = dnsNameProblem(*s)) {
          r.badValue("query_name", *why, "write a domain name, e.g. \"www.example.com\"");
        }
        c.query_name = *s;
      }
      if (auto s = r.string("query_type")) {
        if (std::find(kDnsTypes.begin(), kDnsTypes.end(), *s) == kDnsTypes.end()) {
          r.badValue("query_type", "\"" + *s + "\" is not a supported record type",
                     "use one of " + quotedAlternatives(kDnsTypes));
        } else {
          c.query_type = *s;
        }
      }
      if (auto s = r.string("expect_rcode")) {
        if (std::find(kDnsRcodes.begin(), kDnsRcodes.end(), *s) == kDnsRcodes.end()) {
          r.badValue("expect_rcode", "\"" + *s + "\" is not a DNS rcode",
                     "use one of " + quotedAlternatives(kDnsRcodes));
        } else {
          c.expect_rcode = *s;
        }
      }
      if (auto s = r.string("expect_answer")) c.expect_answer = *s;
    }
    if (owns("source_address")) {
      if (auto s = r.string("source_address")) {
        if (auto a = IpAddress::parse(*s)) {
          c.source_address = a;
        } else {
          r.badValue("source_address", "\"" + *s + "\" is not an IP address",
                     "name an address of this director, e.g. \"198.51.100.10\"");
        }
      }
    }
    if (owns("tcp_reset")) {
      if (auto b = r.boolean("tcp_reset")) c.tcp_reset = *b;
    }
    if (owns("helo")) {
      if (auto s = r.string("helo")) c.helo = *s;
    }
    if (owns("command")) {
      if (auto cmd = readCommand(r, "command")) c.command = cmd;
      if (auto b = r.boolean("exit_weight")) c.exit_weight = *b;
    }

    if (c.type == CheckType::kDns && c.query_name.empty()) {
      error(r.where(), "[" + r.path() +
                           "] is a dns check without query_name; add "
                           "query_name = \"www.example.com\"");
    }
    if (c.type == CheckType::kExec && !c.command && !r.has("command")) {
      error(r.where(), "[" + r.path() +
                           "] is an exec check without command; add "
                           "command = [\"/path/to/check\", \"arg\"]");
    }
    if (c.type == CheckType::kUdp && c.payload.empty()) {
      error(r.where(), "[" + r.path() +
                           "] is a udp check without payload; add payload = "
                           "\"...\" (a UDP service answers only when asked something)");
    }
    CheckType type = c.type;
    r.finish([type, &r](const std::string& key) -> std::string {
      auto it = checkOptionOwners().find(key);
      if (it == checkOptionOwners().end()) return {};
      std::vector<std::string> names;
      for (CheckType t : it->second) names.push_back("\"" + checkTypeName(t) + "\"");
      return r.path() + "." + key + " is an option of " + TableReader::alternatives(names) +
             " checks; this check is type = \"" + checkTypeName(type) +
             "\", so remove it or change the type";
    });
    return c;
  }

  static std::optional<StatusRange> parseStatusRange(const std::string& s) {
    auto num = [](std::string_view t) -> std::optional<int> {
      if (t.size() != 3) return std::nullopt;
      int v = 0;
      for (char ch : t) {
        if (ch < '0' || ch > '9') return std::nullopt;
        v = v * 10 + (ch - '0');
      }
      if (v < 100 || v > 599) return std::nullopt;
      return v;
    };
    size_t dash = s.find('-');
    if (dash == std::string::npos) {
      auto v = num(s);
      if (!v) return std::nullopt;
      return StatusRange{*v, *v};
    }
    auto lo = num(std::string_view(s).substr(0, dash));
    auto hi = num(std::string_view(s).substr(dash + 1));
    if (!lo || !hi || *lo > *hi) return std::nullopt;
    return StatusRange{*lo, *hi};
  }

  void readSync(TableReader r, Sync& s) {
    if (auto b = r.boolean("enabled")) s.enabled = *b;
    if (auto v = r.string("interface")) {
      s.interface = *v;
      if (auto why = interfaceNameProblem(*v)) {
        r.badValue("interface", *why, "name the link the directors share as `ip link` shows it");
      }
    }
    if (s.enabled && s.interface.empty()) {
      error(r.where(),
            "[sync] is enabled without an interface; add interface = \"eth1\" "
            "(the link the directors share for connection sync)");
    }
    if (auto v = r.integer("sync_id", 0, 255)) s.sync_id = static_cast<int>(*v);
    if (auto a = r.address("multicast_group")) {
      if (!a->isMulticast()) {
        r.badValue("multicast_group", a->toString() + " is not a multicast address",
                   "use one in 224.0.0.0/4 or ff00::/8, e.g. \"224.0.0.81\"");
      } else {
        s.multicast_group = *a;
      }
    }
    if (auto v = r.integer("port", 1, 65535)) s.port = static_cast<uint16_t>(*v);
    if (auto v = r.integer("ttl", 1, 255)) s.ttl = static_cast<int>(*v);
    if (auto v = r.integer("max_message_length", 128, 65507)) {
      s.max_message_length = static_cast<int>(*v);
    }
    if (auto d = r.duration("sync_settle", 0ms, 1h)) s.settle = *d;
    if (auto v = r.fraction("sync_min_share")) s.min_share = *v;
    if (auto d = r.duration("sync_max_wait", 0ms, 24h)) s.max_wait = *d;
    r.finish();
  }

  ServiceRoute readServiceRoute(TableReader& r, const VirtualServer& vs) {
    ServiceRoute route;
    if (auto v = r.integer("min_healthy", 1, 100000)) route.min_healthy = static_cast<int>(*v);
    if (vs.fwmark) {
      error(r.where(), "[virtual_server.route] on the firewall-mark service " + vs.name +
                           ": a mark has no address to route; route its addresses' services "
                           "instead, or drop the route table");
    }
    r.finish();
    return route;
  }

  void readRoutes(TableReader& r, Routes& routes) {
    if (auto m = r.choice<RouteMode>("mode", {{"active-backup", RouteMode::kActiveBackup},
                                              {"active-active", RouteMode::kActiveActive}})) {
      routes.mode = *m;
    }
    if (auto v = r.integer("table", 1, UINT32_MAX)) {
      if (*v == 253 || *v == 255) {
        r.badValue(
            "table",
            std::to_string(*v) + " is the kernel's " + (*v == 255 ? "local" : "default") + " table",
            "use 254 (main) or a table of tandem's own, e.g. 100");
      } else {
        routes.table = static_cast<uint32_t>(*v);
      }
    }
    if (auto v = r.integer("protocol", 5, 255)) {
      if (const char* owner = routeProtocolOwner(static_cast<int>(*v))) {
        r.badValue("protocol",
                   std::to_string(*v) + " is " + owner +
                       "'s: tandem would sweep that daemon's routes as orphans, and it tandem's",
                   "use the default, 201, or another number no program on the director uses");
      } else {
        routes.protocol = static_cast<int>(*v);
      }
    }
    if (auto v = r.string("interface")) {
      if (auto why = interfaceNameProblem(*v)) {
        r.badValue("interface", *why, "name the interface as `ip link` shows it, e.g. \"tandem0\"");
      } else {
        routes.interface = *v;
      }
    }
    if (auto b = r.boolean("own_interface")) routes.own_interface = *b;
    if (auto v = r.integer("metric", 0, UINT32_MAX)) routes.metric = static_cast<uint32_t>(*v);
    if (auto d = r.duration("hold_down", 0ms, 1h)) routes.hold_down = *d;
    r.finish();
  }

  void readIpvs(TableReader r, Ipvs& i) {
    if (auto m = r.choice<IpvsManage>("manage",
                                      {{"owned", IpvsManage::kOwned}, {"all", IpvsManage::kAll}})) {
      i.manage = *m;
    }
    if (auto d = r.duration("monitor_interval", 100ms, 1h)) i.monitor_interval = *d;
    if (auto d = r.duration("tcp_timeout", 0ms, kForever)) i.tcp_timeout = *d;
    if (auto d = r.duration("tcpfin_timeout", 0ms, kForever)) i.tcpfin_timeout = *d;
    if (auto d = r.duration("udp_timeout", 0ms, kForever)) i.udp_timeout = *d;
    for (const char* k : {"tcp_timeout", "tcpfin_timeout", "udp_timeout"}) {
      const Millis& v = std::string_view(k) == "tcp_timeout"      ? i.tcp_timeout
                        : std::string_view(k) == "tcpfin_timeout" ? i.tcpfin_timeout
                                                                  : i.udp_timeout;
      if (v.count() % 1000 != 0) {
        r.badValue(k, "IPVS keeps its timeouts in whole seconds",
                   "write a whole number of seconds, e.g. \"900s\" or \"15m\"");
      }
    }
    if (auto b = r.boolean("set_sysctls")) i.set_sysctls = *b;
    r.finish();
  }

  void readControl(TableReader r, Control& c) {
    if (auto v = r.string("group")) {
      if (v->empty())
        r.badValue("group", "the group is empty", "name a unix group, e.g. \"root\"");
      else
        c.group = *v;
    }
    if (auto v = r.string("ipc_name")) {
      bool ok = !v->empty() && v->size() <= 64 && std::all_of(v->begin(), v->end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '-' || ch == '_' || ch == '.';
      });
      if (!ok) {
        r.badValue("ipc_name", "\"" + *v + "\" is not a usable IPC name",
                   "use 1 to 64 letters, digits, '-', '_' or '.'");
      } else {
        c.ipc_name = *v;
      }
    }
    r.finish();
  }

  void readMetrics(TableReader r, Metrics& m) {
    if (auto v = r.boolean("enabled")) m.enabled = *v;
    if (auto v = r.string("listen")) {
      if (auto e = Endpoint::parse(*v, false)) {
        m.listen = *e;
      } else {
        r.badValue("listen", endpointProblem(*v, false),
                   "use ADDRESS:PORT, e.g. \"127.0.0.1:9474\" or \"[::1]:9474\"");
      }
    }
    r.finish();
  }

  void readDaemon(TableReader r, Daemon& d) {
    if (auto v = r.string("state_dir")) {
      if (v->empty() || v->front() != '/') {
        r.badValue("state_dir", "\"" + *v + "\" is not an absolute path",
                   "use an absolute directory, e.g. \"/var/lib/tandem\"");
      } else {
        d.state_dir = *v;
      }
    }
    if (auto v = r.string("log_level")) {
      if (std::find(kLogLevels.begin(), kLogLevels.end(), *v) == kLogLevels.end()) {
        r.badValue("log_level", "\"" + *v + "\" is not a log level",
                   "use one of " + quotedAlternatives(kLogLevels));
      } else {
        d.log_level = *v;
      }
    }
    r.finish();
  }

  void readNotify(TableReader r, Notify& n) {
    for (auto [key, field] :
         {std::pair{"role", &n.role}, std::pair{"active", &n.active},
          std::pair{"backup", &n.backup}, std::pair{"fault", &n.fault}, std::pair{"vip", &n.vip}}) {
      *field = readCommand(r, key);
      if (!*field) continue;
      if (auto why = programProblem(**field, files_)) {
        error(r.where(key), "notify." + std::string(key) + " " + *why);
        field->reset();
      }
    }
    if (auto d = r.duration("timeout", 100ms, 10min)) n.timeout = *d;
    r.finish([](const std::string& key) -> std::string {
      // keepalived's names for them.
      static const std::map<std::string, std::string> keepalived = {{"notify_master", "active"},
                                                                    {"notify_backup", "backup"},
                                                                    {"notify_fault", "fault"},
                                                                    {"notify", "role"}};
      auto it = keepalived.find(key);
      if (it == keepalived.end()) return {};
      return "unknown key \"" + key + "\" in [notify]; keepalived's " + key + " is notify." +
             it->second + " here";
    });
  }

  const FileSystem& files_;
  ReadContext ctx_;
  Positions pos_;
};

}  // namespace

LoadResult loadConfigText(std::string_view text, const std::string& source,
                          const FileSystem& files) {
  LoadResult out = Loader(source, files).run(text);
  out.text = std::string(text);
  return out;
}

LoadResult loadConfigFile(const std::string& path, const FileSystem& files) {
  auto text = files.readFile(path, kMaxConfigBytes);
  if (!text) {
    LoadResult out;
    out.diagnostics.error(path, 1, 1, text.error().message);
    return out;
  }
  return loadConfigText(*text, path, files);
}

}  // namespace tandem::config
