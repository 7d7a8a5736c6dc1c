#include "ipvs/owned_services.h"

#include <netinet/in.h>

#include <charconv>

namespace tandem::resources::ipvs {

namespace {

std::optional<uint16_t> protocolOf(std::string_view word) {
  if (word == "tcp") return IPPROTO_TCP;
  if (word == "udp") return IPPROTO_UDP;
  if (word == "sctp") return IPPROTO_SCTP;
  return std::nullopt;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// The key a line names, or why it names none.
Result<ServiceKey> parseLine(std::string_view line) {
  const auto w = words(line);
  ServiceKey key;
  if (w.size() == 3 && w[0] == "fwmark") {
    uint32_t mark = 0;
    auto [end, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), mark);
    if (ec != std::errc() || end != w[1].data() + w[1].size() || mark == 0) {
      return fail(ErrorCode::kParse, "\"" + std::string(w[1]) + "\" is not a fwmark (1 to " +
                                         std::to_string(UINT32_MAX) + ")");
    }
    if (w[2] != "ipv4" && w[2] != "ipv6") {
      return fail(ErrorCode::kParse,
                  "\"" + std::string(w[2]) + "\" is not a family (ipv4 or ipv6)");
    }
    key.fwmark = mark;
    key.family = w[2] == "ipv4" ? Family::kInet : Family::kInet6;
    return key;
  }
  if (w.size() == 2) {
    auto proto = protocolOf(w[0]);
    if (!proto) {
      return fail(ErrorCode::kParse,
                  "\"" + std::string(w[0]) + "\" is not a protocol (tcp, udp, sctp or fwmark)");
    }
    auto ep = Endpoint::parse(w[1], false);
    if (!ep || ep->port == 0) {
      return fail(ErrorCode::kParse, "\"" + std::string(w[1]) +
                                         "\" is not an address:port (198.51.100.10:80, "
                                         "[2001:db8::10]:80)");
    }
    key.protocol = *proto;
    key.address = ep->address;
    key.family = ep->address.family;
    key.port = ep->port;
    return key;
  }
  return fail(ErrorCode::kParse, "want \"PROTOCOL ADDRESS:PORT\" or \"fwmark MARK ipv4|ipv6\"");
}

}  // namespace

std::string formatOwned(const std::set<ServiceKey>& owned) {
  std::string out =
      "# IPVS virtual services tandemd owns; rewritten after each complete reconcile\n";
  for (const auto& k : owned) {
    if (k.fwmark != 0) {
      out += "fwmark " + std::to_string(k.fwmark) +
             (k.family == Family::kInet ? " ipv4\n" : " ipv6\n");
      continue;
    }
    // Another protocol: no config makes one, and parseOwned could not read it back.
    if (k.protocol != IPPROTO_TCP && k.protocol != IPPROTO_UDP && k.protocol != IPPROTO_SCTP) {
      continue;
    }
    out += protocolName(k.protocol) + " " + hostPort(k.address, k.port) + "\n";
  }
  return out;
}

ParsedOwned parseOwned(std::string_view text, const std::string& path) {
  ParsedOwned out;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto w = words(line);
    if (w.empty() || w[0].front() == '#') continue;
    auto key = parseLine(line);
    if (!key) {
      out.warnings.push_back(path + ":" + std::to_string(line_no) + ": " + key.error().message +
                             "; line ignored");
      continue;
    }
    out.keys.insert(*key);
  }
  return out;
}

}  // namespace tandem::resources::ipvs
