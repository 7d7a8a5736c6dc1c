// importLdirectord: ldirectord.cf -> a complete tandem.conf and a report of every line.
//
// ldirectord resolves most of a virtual service's settings late (a virtual's own value, else
// the global one, else a default that depends on the check type or the port); the importer
// resolves them the same way, so that the tandem.conf behaves as ldirectord did, and says
// where it cannot. This file reads the file, checks where each directive may stand, and writes
// the cluster's part; each virtual block is ldirectord_virtual.cpp's.
#include <algorithm>
#include <array>
#include <span>
#include <string_view>

#include "common/text.h"
#include "ldirectord_importer.h"

namespace tandem::importer {

namespace ldirectord_import {

namespace {

// Where ldirectord accepts each directive.
constexpr auto kGlobalOnly = std::to_array<std::string_view>(
    {"autoreload", "callback", "logfile", "execute", "fork", "supervised", "readdquiescent",
     "maintenancedir", "emailalertfrom"});
constexpr auto kEither = std::to_array<std::string_view>(
    {"checktimeout", "negotiatetimeout", "connecttimeout", "checkinterval", "failurecount",
     "checkcount", "fallback", "fallback6", "fallbackcommand", "quiescent", "emailalert",
     "emailalertfreq", "emailalertstatus", "smtp", "cleanstop"});
constexpr auto kVirtualOnly = std::to_array<std::string_view>(
    {"request",     "receive",     "checktype",   "checkcommand", "checkport", "login",
     "passwd",      "database",    "secret",      "load",         "scheduler", "persistent",
     "schedflags",  "netmask",     "protocol",    "ops",          "service",   "httpmethod",
     "virtualhost", "monitorfile", "servicename", "comment"});
constexpr auto kServices = std::to_array<std::string_view>(
    {"dns",  "ftp",   "http",   "https",     "http_proxy", "imap",   "imaps",
     "ldap", "ldaps", "mysql",  "nntp",      "none",       "oracle", "pgsql",
     "pop",  "pops",  "radius", "simpletcp", "sip",        "smtp",   "submission"});
// Directives that take yes or no.
constexpr auto kYesNo = std::to_array<std::string_view>(
    {"autoreload", "fork", "supervised", "quiescent", "readdquiescent", "cleanstop", "ops"});

}  // namespace

std::string seconds(int64_t s) { return tomlDuration(s * 1000); }
// The same without the quotes, for prose: "1m30s".
std::string plain(int64_t s) {
  std::string q = seconds(s);
  return q.substr(1, q.size() - 2);
}

void Importer::checkKeys() {
  std::vector<std::string> known;
  for (auto set :
       {std::span<const std::string_view>(kGlobalOnly), std::span<const std::string_view>(kEither),
        std::span<const std::string_view>(kVirtualOnly)}) {
    for (auto k : set) known.emplace_back(k);
  }
  auto unknown = [&](const ld::Directive& d) {
    std::string msg = "unknown directive \"" + d.key + "\" (ldirectord refuses it too)";
    if (auto m = closestMatch(d.key, known)) msg += "; did you mean \"" + *m + "\"?";
    error(d.line, msg);
  };
  auto value_check = [&](const ld::Directive& d) {
    if (d.key == "checktype") {
      const std::string& c = d.value;
      bool numeric =
          std::all_of(c.begin(), c.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      if (!numeric && c != "connect" && c != "negotiate" && c != "ping" && c != "off" &&
          c != "on" && c != "external" && c != "external-perl") {
        error(d.line, "checktype \"" + c +
                          "\" is not connect, negotiate, on, off, ping, external, "
                          "external-perl or a number");
      }
    }
    if (d.key == "service" && !among(kServices, d.value)) {
      error(d.line, "service \"" + d.value +
                        "\" is not one ldirectord knows: use dns, ftp, "
                        "http, https, http_proxy, imap, imaps, ldap, ldaps, mysql, nntp, none, "
                        "oracle, pgsql, pop, pops, radius, simpletcp, sip, smtp or submission");
    }
  };
  auto yes_no = [&](const ld::Directive& d) {
    if (among(kYesNo, d.key) && d.value != "yes" && d.value != "no") {
      error(d.line, d.key + " takes yes or no, not \"" + d.value + "\"");
    }
  };
  for (const auto& d : config_.globals) {
    if (among(kVirtualOnly, d.key) || d.key == "real" || d.key == "real6") {
      error(d.line, d.key + " belongs to a virtual service: indent it under its virtual= line");
    } else if (!among(kGlobalOnly, d.key) && !among(kEither, d.key)) {
      unknown(d);
    } else {
      yes_no(d);
    }
  }
  for (const auto& v : config_.virtuals) {
    for (const auto& d : v.directives) {
      if (among(kGlobalOnly, d.key)) {
        error(d.line, d.key +
                          " is a global directive: write it at the start of a line, before "
                          "the first virtual=");
      } else if (d.key == "virtual" || d.key == "virtual6") {
        error(d.line, d.key + " starts a new virtual service: write it at the start of a line");
      } else if (!among(kEither, d.key) && !among(kVirtualOnly, d.key)) {
        unknown(d);
      } else {
        yes_no(d);
        value_check(d);
      }
    }
  }
}

void Importer::recordGlobals() {
  for (const auto& d : config_.globals) {
    if (d.key == "quiescent") {
      rec(d.line, "global", d.value == "yes" ? "quiescent = yes" : "quiescent = no");
    } else {
      rec(d.line, "global", d.key);
    }
  }
}

ImportResult Importer::run(std::string_view text) {
  ld::ParseResult parsed = ld::parseConfig(text, file_);
  config_ = std::move(parsed.config);
  errors_ = std::move(parsed.errors);
  checkKeys();
  // The global values every virtual service inherits are checked once, at their own line.
  for (const char* key : {"checktimeout", "negotiatetimeout", "connecttimeout"}) {
    if (const auto* d = global(key)) (void)number(*d, 1, 600, "tandem's timeout is 10m at most");
  }
  if (const auto* d = global("checkinterval")) {
    (void)number(*d, 1, 3600, "tandem checks at least hourly");
  }
  if (const auto* d = global("failurecount")) (void)number(*d, 1, 100, "tandem's fall");
  for (const char* key : {"fallback", "fallback6"}) {
    if (const auto* d = global(key)) {
      auto fb = ld::parseFallback(d->value);
      if (!fb) {
        error(d->line, fb.error().message);
      } else if ((fb->address.family == Family::kInet6) != (d->key == "fallback6")) {
        error(d->line, d->key == "fallback6"
                           ? "fallback6 takes an IPv6 address in brackets; write an IPv4 one "
                             "as fallback="
                           : "fallback takes an IPv4 address; write an IPv6 one as fallback6=");
      }
    }
  }
  // Each virtual service even after an error, so that one run names every problem.
  recordGlobals();
  for (const auto& v : config_.virtuals) importVirtual(v);
  ImportResult out;
  if (!errors_.empty()) {
    std::stable_sort(errors_.begin(), errors_.end(),
                     [](const ImportError& a, const ImportError& b) { return a.line < b.line; });
    out.errors = std::move(errors_);
    return out;
  }
  writeCluster();
  out.conf = draft_.render();
  out.report = std::move(report_);
  return out;
}

void Importer::writeCluster() {
  draft_.header({
      "tandem.conf imported from " + file_ + " (ldirectord).",
      "",
      "ldirectord ran the IPVS part only: heartbeat or Pacemaker held the VIPs and started it on",
      "one director at a time. tandem does both, so before this file is used:",
      "  1. rename the two [[node]] tables to the directors' names in corosync.conf, and list",
      "     the interfaces that carry VIPs in node.interfaces;",
      "  2. add a [[vip]] for every VIP that haresources or Pacemaker's IPaddr2 held (see below);",
      "  3. run `tandem keygen " + options_.key_file +
          "` beside this file and copy the key to the other",
      "     director with its mode (0600);",
      "  4. stop ldirectord and its heartbeat or Pacemaker resources: one IPVS table, one owner;",
      "  5. check it: tandem config verify FILE.",
      "Each virtual service's table names the ldirectord.cf line it came from.",
  });
  ConfTable& cluster = draft_.add("[cluster]");
  cluster.set("name", tomlString("ldirectord"), "one name per cluster, as it appears in logs");
  cluster.set("failback", tomlString("manual"),
              "heartbeat's auto_failback on, or a Pacemaker location preference: \"auto\"");
  ConfTable& key = draft_.add("[[cluster.key]]", {"Create it: tandem keygen " + options_.key_file +
                                                  " (relative paths are beside this file)."});
  key.set("id", "1");
  key.set("file", tomlString(options_.key_file));
  ConfTable& n1 = draft_.add(
      "[[node]]", {"Rename both directors to their node names in corosync.conf (uname -n)."});
  n1.set("name", tomlString("director1"), "rename: this director is preferred");
  n1.set("priority", "150");
  n1.suggest("interfaces", tomlStrings({"eth0"}), "the interfaces the VIPs go on");
  ConfTable& n2 = draft_.add("[[node]]");
  n2.set("name", tomlString("director2"), "rename");
  n2.set("priority", "100");
  n2.suggest("interfaces", tomlStrings({"eth0"}), "the interfaces the VIPs go on");

  std::vector<std::string> vip_lines = {
      "The VIPs: heartbeat's haresources or Pacemaker's IPaddr2 resources held them; tandem holds",
      "them as [[vip]] tables, each on an interface in node.interfaces. The virtual services",
      "below use these addresses; with the prefix of their subnet and their interface:"};
  std::sort(vips_.begin(), vips_.end());
  vips_.erase(std::unique(vips_.begin(), vips_.end()), vips_.end());
  for (const auto& a : vips_) {
    vip_lines.push_back("");
    vip_lines.push_back("[[vip]]");
    vip_lines.push_back("address = " +
                        tomlString(a.toString() + (a.family == Family::kInet ? "/24" : "/64")));
    vip_lines.push_back("interface = \"eth0\"");
  }
  draft_.add("", vip_lines);
  for (auto& t : services_) draft_.add(t.header, t.comments) = std::move(t);

  report_.note(
      "ldirectord has no cluster part: rename the [[node]] tables director1 and director2 to the "
      "directors' node names in corosync.conf, and list their VIP interfaces in node.interfaces");
  report_.note(
      "the VIPs that heartbeat's haresources or Pacemaker's IPaddr2 held become [[vip]] tables "
      "(address/prefix and interface); the file suggests one per virtual service address");
  report_.note(
      "tandem needs corosync: set up corosync.conf with both directors (heartbeat's "
      "ha.cf or Pacemaker's corosync.conf has the nodes)");
  report_.note("create the cluster key beside the config: tandem keygen " + options_.key_file +
               ", and copy it to the other director with mode 0600");
  if (quiescent_defaulted_) {
    report_.note(
        "quiescent is not set: ldirectord's code removes a failed real server (its default is no, "
        "though its man page says yes), so on_failure = \"remove\"; set \"quiescent\" to keep "
        "its connections");
  }
}

}  // namespace ldirectord_import

ImportResult importLdirectord(const std::string& file, const SourceReader& reader,
                              const ImportOptions& options) {
  auto text = reader.read(file);
  if (!text) {
    ImportResult out;
    out.errors.push_back({file, 0, text.error().message});
    return out;
  }
  return ldirectord_import::Importer(file, options).run(*text);
}

}  // namespace tandem::importer
