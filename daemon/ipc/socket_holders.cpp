#include "socket_holders.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace tandem::ipc {

namespace {

constexpr unsigned long kListening = 0x10000;  // __SO_ACCEPTCON in /proc/net/unix's Flags

// The inodes of the listening sockets named "@NAME" in PROC/net/unix.
std::set<std::string> listeningInodes(std::string_view name, const std::string& proc_root) {
  std::set<std::string> inodes;
  std::ifstream in(proc_root + "/net/unix");
  std::string line;
  std::getline(in, line);  // the header
  const std::string wanted = "@" + std::string(name);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string num, refcount, protocol, flags, type, state, inode, path;
    if (!(fields >> num >> refcount >> protocol >> flags >> type >> state >> inode >> path)) {
      continue;  // an unnamed socket has no path
    }
    unsigned long bits = 0;
    try {
      bits = std::stoul(flags, nullptr, 16);
    } catch (const std::exception&) {
      continue;
    }
    // libqb binds the whole sun_path, the name padded with NULs, which the kernel prints as
    // '@': "@tandem@@@@...". The names tandem allows have no '@' of their own.
    bool named = path.compare(0, wanted.size(), wanted) == 0 &&
                 path.find_first_not_of('@', wanted.size()) == std::string::npos;
    if (named && (bits & kListening) != 0) inodes.insert(inode);
  }
  return inodes;
}

uid_t uidOf(const std::filesystem::path& pid_dir) {
  std::ifstream in(pid_dir / "status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) == 0) {
      std::istringstream fields(line.substr(4));
      unsigned long real = 0;
      if (fields >> real) return static_cast<uid_t>(real);
    }
  }
  return static_cast<uid_t>(-1);
}

}  // namespace

std::vector<SocketHolder> abstractSocketHolders(std::string_view name,
                                                const std::string& proc_root) {
  namespace fs = std::filesystem;
  std::vector<SocketHolder> holders;
  const std::set<std::string> inodes = listeningInodes(name, proc_root);
  if (inodes.empty()) return holders;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(proc_root, ec)) {
    const std::string pid_text = entry.path().filename().string();
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::error_code fd_ec;
    for (const auto& fd : fs::directory_iterator(entry.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      const std::string target = fs::read_symlink(fd.path(), link_ec).string();
      if (link_ec || target.rfind("socket:[", 0) != 0 || target.back() != ']') continue;
      if (inodes.count(target.substr(8, target.size() - 9)) == 0) continue;
      SocketHolder h;
      h.pid = static_cast<pid_t>(std::stol(pid_text));
      h.uid = uidOf(entry.path());
      std::ifstream comm(entry.path() / "comm");
      std::getline(comm, h.comm);
      holders.push_back(std::move(h));
      break;  // one line per process, however many descriptors it holds on the socket
    }
  }
  return holders;
}

std::string describeHolders(const std::vector<SocketHolder>& holders) {
  std::string text;
  for (const SocketHolder& h : holders) {
    if (!text.empty()) text += ", ";
    text += "pid " + std::to_string(h.pid) + " (" + (h.comm.empty() ? "?" : h.comm) + ", uid " +
            std::to_string(h.uid) + ")";
  }
  return text;
}

}  // namespace tandem::ipc
