// keepalived.conf -> tandem.conf: the model written out as TOML, and two directors compared
// (keepalived_importer.h).
#include "keepalived_importer.h"

namespace tandem::importer::keepalived_import {

// A valid node name from router_id: letters, digits, - and _, else the fallback.
std::string nodeName(const std::string& router_id, const std::string& fallback) {
  if (router_id.empty() || router_id.size() > 63) return fallback;
  for (char c : router_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return fallback;
    }
  }
  return router_id;
}

void writeCheck(ConfTable& t, const CheckSpec& c) {
  t.set("type", tomlString(c.type));
  t.set("interval", tomlDuration(c.interval));
  t.set("timeout", tomlDuration(c.timeout));
  t.set("rise", "1", "keepalived puts a real server back after one good check");
  t.set("fall", std::to_string(c.fall), "keepalived's retry + 1");
  if (c.alpha) t.set("initial", tomlString("down"), "alpha");
  for (const auto& [k, v] : c.keys) t.set(k, v);
}

void writeServices(ConfDraft& draft, const Director& d) {
  for (const auto& s : d.services) {
    ConfTable& t =
        draft.add("[[virtual_server]]", {"from " + s.file + ":" + std::to_string(s.line)});
    if (!s.address.empty()) {
      t.set("address", tomlString(s.address));
    } else {
      t.set("fwmark", std::to_string(*s.fwmark));
    }
    for (const auto& [k, v] : s.keys) t.set(k, v);
    // One check for the whole service when every real server has the same; otherwise each its
    // own.
    bool same = !s.reals.empty() && s.reals[0].check &&
                std::all_of(s.reals.begin(), s.reals.end(),
                            [&](const RealSpec& r) { return r.check == s.reals[0].check; });
    if (same) writeCheck(draft.add("[virtual_server.check]"), *s.reals[0].check);
    for (const auto& r : s.reals) {
      ConfTable& rt = draft.add("[[virtual_server.real_server]]");
      rt.set("address", tomlString(r.address));
      for (const auto& [k, v] : r.keys) rt.set(k, v);
      if (!same && r.check) writeCheck(draft.add("[virtual_server.real_server.check]"), *r.check);
    }
  }
}

// Everything of d that both directors share, rendered, for comparing two files.
std::vector<std::string> sharedLines(const Director& d) {
  ConfDraft draft;
  ConfTable& t = draft.add("[cluster]");
  t.set("failback", d.failback.value_or(""));
  t.set("failback_delay", std::to_string(d.failback_delay.value_or(0)));
  t.set("advert", std::to_string(d.advert_ms.value_or(0)));
  for (const auto& v : d.vips)
    draft.add("[[vip]]")
        .set("address", v.address)
        .set("interface", v.interface)
        .set("label", v.label);
  ConfTable& n = draft.add("[notify]");
  for (const auto& [k, v] : d.notify) n.set(k, v);
  ConfTable& sy = draft.add("[sync]");
  for (const auto& [k, v] : d.sync) sy.set(k, v);
  ConfTable& ip = draft.add("[ipvs]");
  for (const auto& [k, v] : d.ipvs) ip.set(k, v);
  ConfTable& an = draft.add("[announce]");
  for (const auto& [k, v] : d.announce) an.set(k, v);
  writeServices(draft, d);
  std::vector<std::string> lines;
  std::string header;
  for (const auto& tb : draft.tables()) {
    if (!tb.header.empty()) header = tb.header;
    for (const auto& e : tb.entries) lines.push_back(header + " " + e.key + " = " + e.value);
  }
  return lines;
}

void compareDirectors(const Director& a, const Director& b, Report& report) {
  std::vector<std::string> la = sharedLines(a), lb = sharedLines(b);
  size_t shown = 0;
  size_t n = std::max(la.size(), lb.size());
  for (size_t i = 0; i < n && shown < 50; ++i) {
    std::string x = i < la.size() ? la[i] : "(nothing)";
    std::string y = i < lb.size() ? lb[i] : "(nothing)";
    if (x != y) {
      report.note("the two files differ: " + a.file + " has `" + x + "`, " + b.file + " has `" + y +
                  "`; the import takes " + a.file + "'s");
      ++shown;
    }
  }
  if (shown == 50) report.note("(more differences not listed)");
}

std::string render(const std::vector<Director>& ds, const ImportOptions& options,
                   const std::vector<std::string>& files) {
  const Director& d = ds[0];
  ConfDraft draft;
  std::string sources;
  for (const auto& f : files) sources += (sources.empty() ? "" : " and ") + f;
  draft.header({"tandem.conf imported from keepalived's " + sources + " by `tandem config import`.",
                "Read the import's report (stderr) for what was dropped and what behaves",
                "differently; check it with `tandem config verify` before use."});
  ConfTable& c = draft.add("[cluster]");
  c.set("name", tomlString("keepalived"), "a name for logs and tandem's output");
  if (d.advert_ms) {
    c.set("heartbeat_interval", tomlDuration(*d.advert_ms), "advert_int");
    c.set("dead_time", tomlDuration(std::min<int64_t>(3 * *d.advert_ms, 30000)), "3 × advert_int");
  }
  std::string failback = d.failback.value_or("auto");
  c.set("failback", tomlString(failback),
        failback == "manual"    ? "nopreempt"
        : failback == "delayed" ? "preempt_delay"
                                : "keepalived preempts by default");
  if (failback == "delayed") c.set("failback_delay", tomlDuration(d.failback_delay.value_or(0)));
  draft
      .add("[[cluster.key]]",
           {"The key that signs every heartbeat: `tandem keygen` writes it; copy it to",
            "each director with its mode (0600)."})
      .set("id", "1")
      .set("file", tomlString(options.key_file));
  for (size_t i = 0; i < 2; ++i) {
    const Director* nd = i < ds.size() ? &ds[i] : nullptr;
    std::string fallback = "director" + std::to_string(i + 1);
    std::vector<std::string> comments;
    if (nd == nullptr) {
      comments = {"The second director: a guess from the first. Import both directors' files to",
                  "fill it in, or set its name and priority here."};
    } else {
      comments = {"From " + nd->file + (nd->state.empty() ? "" : " (state " + nd->state + ")") +
                  ". The name must be the director's host name, as corosync.conf names it."};
    }
    ConfTable& n = draft.add("[[node]]", comments);
    std::string name = nd ? nodeName(nd->name, fallback) : fallback;
    if (i == 1 && ds.size() > 1 && name == nodeName(ds[0].name, "director1")) name = fallback;
    n.set("name", tomlString(name));
    int prio = nd && nd->priority
                   ? *nd->priority
                   : (d.priority.value_or(100) > 1 ? d.priority.value_or(100) - 1 : 0);
    n.set("priority", std::to_string(std::clamp(prio, 0, 255)));
    n.set("interfaces", tomlStrings(nd ? nd->interfaces : d.interfaces));
  }
  for (const auto& v : d.vips) {
    ConfTable& t = draft.add("[[vip]]");
    t.set("address", tomlString(v.address));
    t.set("interface", tomlString(v.interface));
    if (!v.label.empty()) t.set("label", tomlString(v.label));
    for (const auto& [k, val] : d.announce) t.set(k, val);
  }
  if (!d.notify.empty()) {
    ConfTable& t = draft.add(
        "[notify]", {"keepalived's notify scripts. tandem gives the event in the environment",
                     "(TANDEM_ROLE, ...), not as arguments: see tandem.conf(5)."});
    for (const auto& [k, v] : d.notify) t.set(k, v);
  }
  if (!d.sync.empty()) {
    ConfTable& t = draft.add("[sync]");
    for (const auto& [k, v] : d.sync) t.set(k, v);
  }
  if (!d.ipvs.empty()) {
    ConfTable& t = draft.add("[ipvs]");
    for (const auto& [k, v] : d.ipvs) t.set(k, v);
  }
  writeServices(draft, d);
  return draft.render();
}

}  // namespace tandem::importer::keepalived_import
