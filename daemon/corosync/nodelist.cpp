#include "corosync/nodelist.h"

#include <charconv>
#include <set>
#include <string_view>

namespace tandem::corosync {

namespace {

constexpr std::string_view kPrefix = "nodelist.node.";

std::optional<uint32_t> parseU32(std::string_view text) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

struct PartialNode {
  std::optional<std::string> nodeid_text;
  std::string name;
  std::string ring0_addr;
};

}  // namespace

Result<std::vector<NodelistEntry>> parseNodelist(const std::map<std::string, std::string>& keys) {
  // Keyed by the numeric index: the text order of the map would put node 10 before node 2.
  std::map<uint32_t, PartialNode> by_index;
  for (const auto& [key, value] : keys) {
    std::string_view k = key;
    if (k.substr(0, kPrefix.size()) != kPrefix) continue;
    k.remove_prefix(kPrefix.size());
    size_t dot = k.find('.');
    if (dot == std::string_view::npos) continue;
    auto index = parseU32(k.substr(0, dot));
    if (!index) continue;
    std::string_view field = k.substr(dot + 1);
    PartialNode& node = by_index[*index];
    if (field == "nodeid") {
      node.nodeid_text = value;
    } else if (field == "name") {
      node.name = value;
    } else if (field == "ring0_addr") {
      node.ring0_addr = value;
    }
  }

  std::vector<NodelistEntry> nodes;
  std::set<uint32_t> seen;
  for (const auto& [index, node] : by_index) {
    std::string where = std::string(kPrefix) + std::to_string(index);
    if (!node.nodeid_text) return fail(ErrorCode::kParse, where + " has no nodeid");
    auto id = parseU32(*node.nodeid_text);
    if (!id || *id == 0) {
      return fail(ErrorCode::kParse,
                  where + ".nodeid is not a valid node id: " + *node.nodeid_text);
    }
    if (!seen.insert(*id).second) {
      return fail(ErrorCode::kParse, where + ".nodeid " + std::to_string(*id) + " is used twice");
    }
    nodes.push_back(NodelistEntry{*id, node.name, node.ring0_addr});
  }
  return nodes;
}

std::optional<std::string> nodeNameFor(const std::vector<NodelistEntry>& nodes, uint32_t nodeid) {
  for (const auto& n : nodes) {
    if (n.nodeid != nodeid) continue;
    return n.name.empty() ? n.ring0_addr : n.name;
  }
  return std::nullopt;
}

}  // namespace tandem::corosync
