#include "config/config_validate.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace tandem::config {

namespace {

std::string forwardingName(Forwarding f) {
  switch (f) {
    case Forwarding::kNat:
      return "nat";
    case Forwarding::kDr:
      return "dr";
    case Forwarding::kTun:
      return "tun";
  }
  return "?";
}

// Why addr/length cannot be a VIP, one host's address on a link; nullopt when it can be.
std::optional<std::string> vipAddressProblem(const IpPrefix& p) {
  const IpAddress& a = p.address;
  const bool v4 = a.family == Family::kInet;
  if (a.isUnspecified()) return "is the unspecified address, which no host answers for";
  if (a.isMulticast()) return "is a multicast address, not one host's";
  if (v4 ? a.bytes[0] == 127 : (a == *IpAddress::parse("::1"))) {
    return "is a loopback address, which never leaves the director";
  }
  if (!v4 && std::all_of(a.bytes.begin(), a.bytes.begin() + 10, [](uint8_t b) { return b == 0; }) &&
      a.bytes[10] == 0xff && a.bytes[11] == 0xff) {
    return "is an IPv4-mapped IPv6 address; write the IPv4 address itself, e.g. " +
           std::to_string(a.bytes[12]) + "." + std::to_string(a.bytes[13]) + "." +
           std::to_string(a.bytes[14]) + "." + std::to_string(a.bytes[15]) + "/24";
  }
  const int shortest = v4 ? 8 : 16;
  if (p.length < shortest) {
    return "has the prefix /" + std::to_string(p.length) +
           ", which would make that much of the Internet on-link on the interface (the kernel "
           "adds a route for it); use the interface's own prefix, at least /" +
           std::to_string(shortest);
  }
  if (v4 && p.length <= 30) {
    const uint32_t host = uint32_t{a.bytes[0]} << 24 | uint32_t{a.bytes[1]} << 16 |
                          uint32_t{a.bytes[2]} << 8 | a.bytes[3];
    const uint32_t hostmask = p.length == 0 ? ~0u : (1u << (32 - p.length)) - 1;
    if ((host & hostmask) == 0)
      return "is the network address of its /" + std::to_string(p.length) + ", not a host's";
    if ((host & hostmask) == hostmask)
      return "is the broadcast address of its /" + std::to_string(p.length) + ", not a host's";
  }
  return std::nullopt;
}

// Why a check of this type cannot probe a service of this protocol; nullopt when it can.
std::optional<std::string> checkProtocolProblem(CheckType t, Protocol p) {
  const bool stream = t == CheckType::kTcp || t == CheckType::kHttp || t == CheckType::kHttps ||
                      t == CheckType::kSmtp;
  if (p == Protocol::kUdp && stream) {
    return std::string(t == CheckType::kTcp ? "a " : "an ") + checkTypeName(t) +
           " check opens a TCP connection, which a UDP service does not answer; use type "
           "\"udp\", \"dns\" or \"exec\"";
  }
  if (p != Protocol::kUdp && t == CheckType::kUdp) {
    return std::string("a udp check sends a datagram, which a ") +
           (p == Protocol::kTcp ? "TCP" : "SCTP") +
           " service does not answer; use type \"tcp\" (or http, https, smtp, exec)";
  }
  return std::nullopt;
}

// The checks that need more than one table at a time: duplicates, references between tables,
// key files on disk, families that must agree.
class Validator {
 public:
  Validator(const Positions& pos, const FileSystem& files, ReadContext& ctx)
      : pos_(pos), files_(files), ctx_(ctx) {}

  void run(const Config& cfg) {
    checkNodes(cfg);
    checkTiebreaker(cfg);
    checkKeys(cfg);
    checkVips(cfg);
    checkVirtualServers(cfg);
    checkRoutes(cfg);
  }

  // Route health injection: where the routes go, and whether each service's can ever be held.
  void checkRoutes(const Config& cfg) {
    const VirtualServer* first = nullptr;
    size_t first_index = 0;
    std::map<std::string, size_t> routed;  // service address -> the virtual server routing it
    for (size_t i = 0; i < cfg.virtual_servers.size(); ++i) {
      const VirtualServer& vs = cfg.virtual_servers[i];
      if (!vs.route || !pos_.virtual_servers[i].ok) continue;
      if (first == nullptr) {
        first = &vs;
        first_index = i;
      }
      // One host route per address: two services deciding it would take it from each other.
      if (vs.address) {
        auto [it, fresh] = routed.emplace(vs.address->address.toString(), i);
        if (!fresh) {
          error(pos_.virtual_servers[i].route,
                "virtual server " + vs.name + ": its address " + it->first +
                    " is routed already by virtual server " + cfg.virtual_servers[it->second].name +
                    " ([virtual_server.route] at line " +
                    std::to_string(pos_.virtual_servers[it->second].route.line) +
                    "); one host route stands for the address: keep [virtual_server.route] on "
                    "one of its services");
        }
      }
      const size_t reals = vs.real_servers.size();
      if (static_cast<size_t>(vs.route->min_healthy) > reals) {
        error(pos_.virtual_servers[i].route,
              "virtual server " + vs.name + ": min_healthy " +
                  std::to_string(vs.route->min_healthy) + " but it has " + std::to_string(reals) +
                  " real server" + (reals == 1 ? "" : "s") +
                  ": its route would never be held; lower min_healthy or add real servers");
      }
    }
    if (first == nullptr) {
      if (pos_.routes) {
        warning(*pos_.routes,
                "[route] is set but no virtual server has a [virtual_server.route]: "
                "no route is held");
      }
      return;
    }
    if (cfg.routes.own_interface && cfg.routes.interface.empty()) {
      error(pos_.routes.value_or(pos_.virtual_servers[first_index].route),
            "own_interface = true but [route] names no interface for tandemd to create; set "
            "interface = \"tandem0\" or drop own_interface");
    }
    if (cfg.routes.interface.empty() && cfg.routes.table == kMainTable) {
      error(pos_.routes.value_or(pos_.virtual_servers[first_index].route),
            "the host routes would be blackholes (no [route] interface) in the main table, where "
            "they would drop the services' traffic; set [route] interface = \"tandem0\" (a "
            "dummy interface) or table = 100 (a table of tandem's own, for the routing daemon)");
    }
  }

  void checkNodes(const Config& cfg) {
    std::set<std::string> names;
    std::map<IpAddress, std::string> addresses;
    for (size_t i = 0; i < cfg.nodes.size(); ++i) {
      const Node& n = cfg.nodes[i];
      if (!names.insert(n.name).second) {
        error(pos_.nodes[i], "node \"" + n.name +
                                 "\" is defined twice; each "
                                 "[[node]] needs its own name");
        continue;
      }
      if (!n.address) continue;
      auto [it, fresh] = addresses.emplace(*n.address, n.name);
      if (!fresh) {
        error(pos_.nodes[i], "nodes \"" + it->second + "\" and \"" + n.name +
                                 "\" share the address " + n.address->toString() +
                                 ", so each would take the other's heartbeats for its own; give "
                                 "each node its own address");
      }
    }
  }

  // The node whose address a is, if any.
  const Node* nodeAt(const Config& cfg, const IpAddress& a) const {
    for (const auto& n : cfg.nodes) {
      if (n.address && *n.address == a) return &n;
    }
    return nullptr;
  }

  // A director cut off from its peer and from the targets must learn that it reaches no target
  // before dead_time has passed since the peer's last heartbeat, or it takes over first.
  void checkTiebreaker(const Config& cfg) {
    for (const IpAddress& t : cfg.cluster.tiebreaker.targets) {
      const Node* n = nodeAt(cfg, t);
      const bool vip = coveredByVip(cfg, t);
      if (n || vip) {
        error(pos_.tiebreaker,
              "tiebreaker target " + t.toString() + " is " +
                  (n ? "node \"" + n->name + "\"'s address" : std::string("a VIP")) +
                  ", which the cluster itself answers, so it cannot tell a director cut off from "
                  "the network from one that is not; name a target outside the cluster, such as "
                  "the gateway");
      }
    }
    const Tiebreaker& t = cfg.cluster.tiebreaker;
    if (t.targets.empty()) return;
    Millis budget = cfg.cluster.dead_time - cfg.cluster.heartbeat_interval;
    if (t.interval + t.timeout >= budget) {
      warning(pos_.tiebreaker,
              "tiebreaker interval + timeout (" + formatDuration(t.interval) + " + " +
                  formatDuration(t.timeout) + ") is not under dead_time - heartbeat_interval (" +
                  formatDuration(budget) +
                  "): a director cut off from its peer and from the targets could take over "
                  "before its tiebreaker fails; lower them (the defaults are 200ms and 300ms)");
    }
  }

  void checkKeys(const Config& cfg) {
    for (size_t i = 0; i < cfg.cluster.keys.size(); ++i) {
      const AuthKey& k = cfg.cluster.keys[i];
      std::string id = "key " + std::to_string(k.id);
      if (!k.credential.empty()) {
        checkCredential(k, id, pos_.keys[i]);
        continue;
      }
      std::string path = keyPath(ctx_.file, k, "");
      auto info = files_.stat(path);
      const size_t slash = path.rfind('/');
      const std::string dir = slash == std::string::npos ? "."
                              : slash == 0               ? "/"
                                                         : path.substr(0, slash);
      if (!info && !files_.stat(dir)) {
        // tandem keygen writes the file, not its directory: suggesting it alone would fail.
        error(pos_.keys[i], id + ": the key file " + path + " does not exist, nor does " + dir +
                                "; create the directory (mkdir -p " + dir +
                                "), then the key with `tandem keygen " + path +
                                "`, and copy it to every node");
      } else if (!info) {
        error(pos_.keys[i], id + ": the key file " + path +
                                " does not exist; create it with "
                                "`tandem keygen " +
                                path + "` and copy it to every node");
      } else if (info->symlink) {
        error(pos_.keys[i], id + ": the key file " + path +
                                " is a symbolic link, which tandem does not follow; point file "
                                "at the key itself");
      } else if (!info->regular) {
        error(pos_.keys[i], id + ": " + path +
                                " is not a regular file; point file at the key "
                                "written by `tandem keygen`");
      } else if ((info->mode & 077) != 0) {
        error(pos_.keys[i], id + ": " + secretModeError(path, info->mode));
      } else if (info->size < 16 || info->size > 4096) {
        error(pos_.keys[i], id + ": " + secretSizeError(path, info->size, 16, 4096));
      }
    }
  }

  // A key from a systemd credential. Outside its unit (`tandem config verify` in a shell) there
  // is no credentials directory: that is said, not refused, as the unit will have one; tandemd
  // itself refuses to start without the key.
  void checkCredential(const AuthKey& k, const std::string& id, Position at) {
    const std::string dir = files_.credentialsDirectory();
    if (dir.empty()) {
      warning(at, id + ": the systemd credential \"" + k.credential +
                      "\" is read from $CREDENTIALS_DIRECTORY, which is not set here; it is "
                      "checked when tandemd starts from its unit (LoadCredential=" +
                      k.credential + " or LoadCredentialEncrypted=" + k.credential + ")");
      return;
    }
    const std::string path = dir + "/" + k.credential;
    auto info = files_.stat(path);
    if (!info) {
      error(at, id + ": no systemd credential \"" + k.credential + "\" in " + dir +
                    "; the unit must load it: LoadCredential=" + k.credential +
                    ":/path/to/key, or LoadCredentialEncrypted= with a file from systemd-creds "
                    "encrypt");
    } else if (info->size < 16 || info->size > 4096) {
      error(at, id + ": " + secretSizeError(path, info->size, 16, 4096));
    }
  }

  void checkVips(const Config& cfg) {
    std::set<std::string> interfaces;
    for (const auto& n : cfg.nodes) interfaces.insert(n.interfaces.begin(), n.interfaces.end());
    std::map<IpAddress, size_t> seen;
    for (size_t i = 0; i < cfg.vips.size(); ++i) {
      const Vip& v = cfg.vips[i];
      if (!pos_.vips[i].ok) continue;
      auto [it, fresh] = seen.emplace(v.address.address, i);
      if (!fresh) {
        error(pos_.vips[i].address,
              "VIP " + v.address.address.toString() + " is defined twice (first at line " +
                  std::to_string(pos_.vips[it->second].address.line) + "); remove one");
      }
      if (auto why = vipAddressProblem(v.address)) {
        error(pos_.vips[i].address, "VIP " + v.address.toString() + " " + *why);
      } else if (const Node* n = nodeAt(cfg, v.address.address)) {
        error(pos_.vips[i].address,
              "VIP " + v.address.toString() + " is node \"" + n->name +
                  "\"'s own address, which must stay on that node whatever its role; give the "
                  "VIP an address of its own");
      }
      if (!v.interface.empty() && !interfaces.count(v.interface) &&
          !interfaceNameProblem(v.interface)) {
        std::vector<std::string> all(interfaces.begin(), interfaces.end());
        error(pos_.vips[i].interface,
              "VIP " + v.address.toString() + " is on interface \"" + v.interface +
                  "\", which no [[node]] lists; add it to the interfaces of the nodes that may "
                  "carry it" +
                  (all.empty() ? std::string() : " (they list " + quotedAlternatives(all) + ")"));
      }
    }
  }

  bool coveredByVip(const Config& cfg, const IpAddress& a) {
    return std::any_of(cfg.vips.begin(), cfg.vips.end(),
                       [&](const Vip& v) { return v.address.address == a; });
  }

  void checkVirtualServers(const Config& cfg) {
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < cfg.virtual_servers.size(); ++i) {
      const VirtualServer& vs = cfg.virtual_servers[i];
      const VsPos& pos = pos_.virtual_servers[i];
      if (!pos.ok) continue;
      std::string key;
      if (vs.address) {
        static const char* kProto[] = {"tcp", "udp", "sctp"};
        key = std::string(kProto[static_cast<int>(vs.protocol)]) + " " + vs.address->toString();
      } else if (vs.fwmark) {
        key = "fwmark " + std::to_string(*vs.fwmark) + " " +
              std::string(familyName(vs.fwmark_family));
      }
      auto [it, fresh] = seen.emplace(key, i);
      if (!fresh) {
        error(pos.address, "virtual server " + key + " is defined twice (first at line " +
                               std::to_string(pos_.virtual_servers[it->second].address.line) +
                               "); merge them into one [[virtual_server]]");
      }
      bool vips_ok =
          std::all_of(pos_.vips.begin(), pos_.vips.end(), [](const VipPos& v) { return v.ok; });
      // A routed service reaches this director by its host route, not by a VIP.
      if (vs.address && !vs.route && vips_ok && !coveredByVip(cfg, vs.address->address)) {
        warning(pos.address, "virtual server " + vs.address->toString() +
                                 " is not on a VIP; it will not move with the active director "
                                 "(add a [[vip]] for " +
                                 vs.address->address.toString() + " if it should)");
      }
      checkCheck(vs.check, vs.protocol, pos.table, "the check of " + vs.name);
      if (vs.fallback && vs.address && *vs.fallback == *vs.address) {
        error(pos.fallback, "the fallback of " + vs.name + " is the virtual service " +
                                vs.address->toString() +
                                " itself, which would send its traffic back to itself; name "
                                "the sorry server's own address");
      }
      Family fam = vs.family();
      if (vs.fallback && vs.fallback->address.family != fam) {
        error(pos.fallback, std::string(familyName(vs.fallback->address.family)) + " fallback " +
                                vs.fallback->toString() + " cannot serve the " +
                                std::string(familyName(fam)) + " service " + vs.name +
                                "; use a fallback of the service's family");
      }
      std::map<Endpoint, size_t> reals;
      for (size_t j = 0; j < vs.real_servers.size(); ++j) {
        const RealServer& rs = vs.real_servers[j];
        const RealPos& rpos = pos.reals[j];
        if (!rpos.ok) continue;
        if (vs.address && rs.address == *vs.address) {
          error(rpos.address, "real server " + rs.address.toString() + " of " + vs.name +
                                  " is the virtual service itself, which would send its traffic "
                                  "back to itself; name the real server's own address");
        }
        if (!(rs.check == vs.check)) {
          checkCheck(rs.check, vs.protocol, rpos.address,
                     "the check of real server " + rs.address.toString() + " in " + vs.name);
        }
        auto [rit, rfresh] = reals.emplace(rs.address, j);
        if (!rfresh) {
          error(rpos.address, "real server " + rs.address.toString() + " is listed twice in " +
                                  vs.name + " (first at line " +
                                  std::to_string(pos.reals[rit->second].address.line) +
                                  "); remove one");
        }
        if (rs.address.address.family != fam && rs.forwarding != Forwarding::kTun) {
          error(rpos.address, std::string(familyName(rs.address.address.family)) + " real server " +
                                  rs.address.toString() + " under the " +
                                  std::string(familyName(fam)) + " service " + vs.name +
                                  " cannot work with " + forwardingName(rs.forwarding) +
                                  " forwarding; use a real server of the service's family (only "
                                  "tun forwarding crosses families)");
        }
        if (rs.check.source_address &&
            rs.check.source_address->family != rs.address.address.family) {
          error(rpos.address, "the check of real server " + rs.address.toString() + " in " +
                                  vs.name + " leaves from the " +
                                  std::string(familyName(rs.check.source_address->family)) +
                                  " source_address " + rs.check.source_address->toString() +
                                  "; give it a source_address of the real server's family");
        }
        if (rs.forwarding == Forwarding::kDr && vs.address && rs.address.port != 0 &&
            rs.address.port != vs.address->port) {
          error(rpos.address, "real server " + rs.address.toString() +
                                  " uses dr forwarding, which cannot change the port (" +
                                  std::to_string(vs.address->port) + "); give it port " +
                                  std::to_string(vs.address->port) + " or use nat");
        }
        if (!vs.address && rs.forwarding == Forwarding::kNat && rs.address.port == 0) {
          error(rpos.address, "real server " + rs.address.toString() + " of the fwmark service " +
                                  vs.name +
                                  " has no port, which nat forwarding needs; write "
                                  "address:port");
        }
      }
    }
  }

 private:
  // One check, once: a virtual server's at its table, a real server's own override at it.
  void checkCheck(const Check& c, Protocol protocol, Position at, const std::string& what) {
    if (c.type == CheckType::kNone) return;
    if (c.timeout > c.interval) {
      error(at, what + " waits up to " + formatDuration(c.timeout) +
                    " for an answer but is meant to run every " + formatDuration(c.interval) +
                    ": a real server that hangs would be seen down only after fall x " +
                    formatDuration(c.timeout) + "; make the timeout at most the interval");
    }
    if (auto why = checkProtocolProblem(c.type, protocol)) error(at, what + ": " + *why);
    if (c.type == CheckType::kExec && c.command) checkProgram(*c.command, at, what);
  }

  void checkProgram(const Command& cmd, Position at, const std::string& what) {
    if (auto why = programProblem(cmd, files_)) error(at, what + " " + *why);
  }

  void error(Position p, const std::string& msg) {
    ctx_.diags.error(ctx_.file, p.line, p.column, msg);
  }
  void warning(Position p, const std::string& msg) {
    ctx_.diags.warning(ctx_.file, p.line, p.column, msg);
  }

  const Positions& pos_;
  const FileSystem& files_;
  ReadContext& ctx_;
};

}  // namespace

std::optional<std::string> programProblem(const Command& cmd, const FileSystem& files) {
  if (cmd.via_shell || cmd.argv.empty() || cmd.argv[0].empty() || cmd.argv[0][0] != '/') {
    return std::nullopt;
  }
  const std::string& program = cmd.argv[0];
  auto info = files.stat(program);
  if (!info) return "runs " + program + ", which does not exist; install it, or fix the path";
  if (!info->regular) return "runs " + program + ", which is not a regular file";
  if ((info->mode & 0111) == 0) {
    return "runs " + program + ", which is not executable; chmod +x " + program;
  }
  return std::nullopt;
}

void crossCheck(const Config& cfg, const Positions& pos, const FileSystem& files,
                ReadContext& ctx) {
  Validator(pos, files, ctx).run(cfg);
}

}  // namespace tandem::config
