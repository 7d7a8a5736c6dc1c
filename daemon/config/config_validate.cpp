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
  }

  void checkNodes(const Config& cfg) {
    std::set<std::string> names;
    for (size_t i = 0; i < cfg.nodes.size(); ++i) {
      if (!names.insert(cfg.nodes[i].name).second) {
        error(pos_.nodes[i], "node \"" + cfg.nodes[i].name +
                                 "\" is defined twice; each "
                                 "[[node]] needs its own name");
      }
    }
  }

  // A director cut off from its peer and from the targets must learn that it reaches no target
  // before dead_time has passed since the peer's last heartbeat, or it takes over first.
  void checkTiebreaker(const Config& cfg) {
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
      std::string path = keyPath(ctx_.file, k);
      auto info = files_.stat(path);
      std::string id = "key " + std::to_string(k.id);
      if (!info) {
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
      if (!v.interface.empty() && !interfaces.count(v.interface)) {
        std::vector<std::string> all(interfaces.begin(), interfaces.end());
        error(pos_.vips[i].interface,
              "VIP " + v.address.toString() + " is on interface \"" + v.interface +
                  "\", which no [[node]] lists; add it to the interfaces of the nodes that may "
                  "carry it" +
                  (all.empty() ? std::string() : " (they list " + quoted(all) + ")"));
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
      if (vs.address && vips_ok && !coveredByVip(cfg, vs.address->address)) {
        warning(pos.address, "virtual server " + vs.address->toString() +
                                 " is not on a VIP; it will not move with the active director "
                                 "(add a [[vip]] for " +
                                 vs.address->address.toString() + " if it should)");
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

void crossCheck(const Config& cfg, const Positions& pos, const FileSystem& files,
                ReadContext& ctx) {
  Validator(pos, files, ctx).run(cfg);
}

}  // namespace tandem::config
