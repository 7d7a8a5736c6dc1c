#include "config/config.h"

#include <cctype>

namespace tandem::config {

const Node* Config::findNode(std::string_view name) const {
  for (const auto& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

std::string keyPath(const std::string& source, const AuthKey& key,
                    const std::string& credentials_dir) {
  if (!key.credential.empty()) {
    return credentials_dir.empty() ? std::string() : credentials_dir + "/" + key.credential;
  }
  if (key.file.empty() || key.file.front() == '/') return key.file;
  size_t slash = source.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : source.substr(0, slash);
  return dir + "/" + key.file;
}

std::optional<std::string> credentialNameProblem(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > 255) return "the name is longer than 255 bytes";
  if (name == "." || name == "..") return "\"" + std::string(name) + "\" is not a file name";
  for (char c : name) {
    if (c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return "the name holds a '/' or a control character";
    }
  }
  return std::nullopt;
}

std::string checkTypeName(CheckType t) {
  switch (t) {
    case CheckType::kNone:
      return "none";
    case CheckType::kTcp:
      return "tcp";
    case CheckType::kHttp:
      return "http";
    case CheckType::kHttps:
      return "https";
    case CheckType::kUdp:
      return "udp";
    case CheckType::kDns:
      return "dns";
    case CheckType::kSmtp:
      return "smtp";
    case CheckType::kExec:
      return "exec";
  }
  return "?";
}

const char* routeProtocolOwner(int protocol) {
  switch (protocol) {
    case 8:
      return "gated";
    case 9:
      return "router advertisements (ra)";
    case 10:
      return "mrt";
    case 11:
      return "zebra";
    case 12:
      return "BIRD";
    case 13:
      return "dnrouted";
    case 14:
      return "XORP";
    case 15:
      return "ntk";
    case 16:
      return "the DHCP client";
    case 17:
      return "mrouted";
    case 18:
      return "keepalived";
    case 42:
      return "babel";
    case 99:
      return "Open/R";
    default:
      break;
  }
  if (protocol >= 186 && protocol <= 198) return "FRR";  // bgp, isis, ospf, rip, ripng, ... srte
  return nullptr;
}

std::optional<std::string> interfaceNameProblem(std::string_view name) {
  if (name.empty()) return "an interface name cannot be empty";
  if (name.size() > 15) {
    return "\"" + std::string(name) + "\" has " + std::to_string(name.size()) +
           " characters; Linux interface names have at most 15";
  }
  if (name == "." || name == "..") return "\"" + std::string(name) + "\" is not an interface name";
  for (char c : name) {
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c))) {
      return "\"" + std::string(name) +
             "\" holds a character the kernel refuses in an interface name (/, : or white "
             "space)";
    }
  }
  return std::nullopt;
}

}  // namespace tandem::config
