#include "config/config_loader.h"

#include <regex.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <vector>

#include "common/text.h"
#include "config/config_loader_parts.h"
#include "config/config_validate.h"
#include "config/toml_reader.h"

namespace tandem::config {
namespace loading {

using namespace std::chrono_literals;

LoadResult Loader::run(std::string_view text) {
  LoadResult out;
  if (auto bad = text.find('\0'); bad != std::string_view::npos) {
    // toml++ would stop here too, but naming the problem helps more than "unexpected char".
    int line =
        1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n'));
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

void Loader::error(Position p, const std::string& msg) {
  ctx_.diags.error(ctx_.file, p.line, p.column, msg);
}

void Loader::warning(Position p, const std::string& msg) {
  ctx_.diags.warning(ctx_.file, p.line, p.column, msg);
}

void Loader::readRoot(const toml::table& root, Config& cfg) {
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

// [[cluster.key]] tables and active_key: the keys that sign and check the frames.
void Loader::readKeys(TableReader& r, Cluster& c) {
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
}

void Loader::readCluster(TableReader r, Cluster& c) {
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
  readKeys(r, c);
  if (auto v = r.duration("heartbeat_interval", 10ms, 10s)) c.heartbeat_interval = *v;
  if (auto v = r.duration("dead_time", 20ms, 60s)) c.dead_time = *v;
  if (c.dead_time < 2 * c.heartbeat_interval) {
    r.badValue(r.has("dead_time") ? "dead_time" : "heartbeat_interval",
               "dead_time " + formatDuration(c.dead_time) + " is shorter than two heartbeats (" +
                   formatDuration(c.heartbeat_interval) + " each)",
               "dead_time must be at least 2 x heartbeat_interval, or one late frame makes a "
               "takeover");
  }
  if (auto v = r.integer("heartbeat_port", 1, 65535)) c.heartbeat_port = static_cast<uint16_t>(*v);
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

std::optional<Command> Loader::readCommand(TableReader& r, std::string_view key) {
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

Node Loader::readNode(TableReader& r) {
  Node n;
  if (auto v = r.string("name", true)) {
    if (v->empty()) r.badValue("name", "the name is empty", "use the node's name in corosync.conf");
    n.name = *v;
  }
  if (auto v = r.integer("priority", 0, 255)) n.priority = static_cast<int>(*v);
  if (auto v = r.integer("route_metric", 1, UINT32_MAX)) n.route_metric = static_cast<uint32_t>(*v);
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

Vip Loader::readVip(TableReader& r) {
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

}  // namespace loading

using loading::Loader;

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
