// frame_injector: a hostile peer for the lab (a test tool, not product code).
//
// Run inside a director's namespaces (lab.sh node_exec: the network namespace for corosync's
// abstract sockets, the mount namespace for its /dev/shm rings), it joins the cluster's CPG
// group like a tandemd would, captures one real heartbeat from each named sender, and then
// sends frames that every tandemd must reject, over CPG and over UDP to the heartbeat port:
//
//   kind             what                                                  expected rejection
//   forged           a heartbeat claiming ACTIVE, epoch +1000, signed with    bad_signature
//                    a random key under the real key id
//   unknown_key      the same under a key id the ring does not hold          unknown_key
//   wrong_cluster    the same for another cluster name                       wrong_cluster
//   replay           the captured frame, byte for byte                       replayed (*)
//   truncated        prefixes of the captured frame                          truncated
//   unknown_node     signed with the REAL key, naming a node not configured  unknown_node
//   garbage          random bytes that do not start with "TNDM"              bad_magic
//   unknown_version  the captured frame with version 2                       unknown_version
//   unknown_type     the captured frame with an unknown type                 unknown_type
//   oversized        the captured frame plus one trailing byte               oversized
//
// (*) at the node that sent the captured frame itself it is unknown_node: a node never takes
// its own name from the wire, and that check comes before the replay window. With --host, a
// replay of another node's frame than the host's is sender_mismatch (the receiver binds a CPG
// delivery to the nodeid's node, a UDP datagram to the source address it knows the node by),
// checked before the window too.
//
// With --play NODE (NODE's tandemd stopped once "captured sender=NODE" is printed, then
// --go-file created), it speaks for NODE with the real key, from NODE's own namespaces (--host
// NODE), over UDP to each --udp destination, continuing NODE's captured incarnation:
//
//   kind             what                                                  expected
//   reordered        heartbeats numbered s+100, s+102, then s+101: new to    superseded
//                    the replay window, but older than a frame already taken
//   stale_release    a release frame from the epoch before NODE's heartbeats' "stale release
//                                                                         ignored" (logged)
//
// Output, one line per fact, key=value, for the lab test to parse:
//   captured sender=d1 key_id=1 incarnation=... sequence=... bytes=...
//   expect path=cpg kind=forged node=d1 reason=bad_signature count=5   (one per node and reason)
//   sent path=cpg kind=forged count=5
//   expect path=udp:d1/198.51.100.11 kind=replay node=d1 reason=unknown_node count=2
//   delivered cpg=N              (our own CPG messages came back: the group carried them all)
//   done sent=N
// Errors go to stderr as "frame_injector: ..." with exit status 1.
#include <arpa/inet.h>
#include <corosync/cpg.h>
#include <netinet/in.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "wire/frame.h"
#include "wire/heartbeat.h"
#include "wire/key_ring.h"
#include "wire/release.h"

namespace {

using namespace tandem;
using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what) {
  std::cerr << "frame_injector: " << what << "\n";
  std::exit(1);
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

tandem::Bytes randomBytes(size_t n) {
  tandem::Bytes b(n);
  if (RAND_bytes(b.data(), static_cast<int>(n)) != 1) die("RAND_bytes failed");
  return b;
}

wire::KeyRing ringWith(uint16_t id, tandem::ByteView secret) {
  wire::KeyRing ring;
  if (auto r = ring.add(id, secret); !r) die("key ring: " + r.error().message);
  return ring;
}

struct Captured {
  tandem::Bytes bytes;
  wire::Frame frame;
  wire::Heartbeat heartbeat;
};

// The CPG side: one group member that records what others send and counts its own messages
// coming back.
class Member {
 public:
  explicit Member(const std::string& group) {
    cpg_callbacks_t callbacks{};
    callbacks.cpg_deliver_fn = &Member::deliver;
    callbacks.cpg_confchg_fn = nullptr;
    if (cs_error_t rc = cpg_initialize(&handle_, &callbacks); rc != CS_OK) {
      die("cpg_initialize failed (cs_error " + std::to_string(rc) +
          "); run inside a director's namespaces (lab.sh node_exec), where corosync runs");
    }
    cpg_context_set(handle_, this);
    if (cpg_fd_get(handle_, &fd_) != CS_OK) die("cpg_fd_get failed");
    if (cpg_local_get(handle_, &nodeid_) != CS_OK) die("cpg_local_get failed");
    if (group.empty() || group.size() >= CPG_MAX_NAME_LENGTH) die("bad group name");
    cpg_name name{};
    name.length = static_cast<uint32_t>(group.size());
    std::memcpy(name.value, group.data(), group.size());
    cs_error_t rc = CS_OK;
    for (int i = 0; i < 200; ++i) {
      rc = cpg_join(handle_, &name);
      if (rc != CS_ERR_TRY_AGAIN) break;
      pump(std::chrono::milliseconds(10));
    }
    if (rc != CS_OK) die("cpg_join(" + group + ") failed (cs_error " + std::to_string(rc) + ")");
  }
  ~Member() { cpg_finalize(handle_); }
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;

  // Polls and dispatches for up to `budget`.
  void pump(std::chrono::milliseconds budget) {
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(budget.count())) > 0) {
      if (cs_error_t rc = cpg_dispatch(handle_, CS_DISPATCH_ALL); rc != CS_OK) {
        die("cpg_dispatch failed (cs_error " + std::to_string(rc) + ")");
      }
    }
  }

  void send(const tandem::Bytes& bytes) {
    iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
    for (int i = 0; i < 500; ++i) {
      cs_error_t rc = cpg_mcast_joined(handle_, CPG_TYPE_AGREED, &iov, 1);
      if (rc == CS_OK) {
        ++sent_;
        return;
      }
      if (rc != CS_ERR_TRY_AGAIN)
        die("cpg_mcast_joined failed (cs_error " + std::to_string(rc) + ")");
      pump(std::chrono::milliseconds(10));  // flow control: let corosync drain
    }
    die("cpg_mcast_joined: corosync kept saying try again");
  }

  // The first heartbeat from `sender` seen from now on.
  std::map<std::string, Captured>& captured() { return captured_; }
  void want(std::set<std::string> senders) { wanted_ = std::move(senders); }
  size_t sent() const { return sent_; }
  size_t echoed() const { return echoed_; }

 private:
  static void deliver(cpg_handle_t handle, const cpg_name* /*group*/, uint32_t nodeid, uint32_t pid,
                      void* msg, size_t len) {
    void* context = nullptr;
    cpg_context_get(handle, &context);
    auto* self = static_cast<Member*>(context);
    if (nodeid == self->nodeid_ && pid == static_cast<uint32_t>(::getpid())) {
      ++self->echoed_;
      return;
    }
    tandem::ByteView bytes(static_cast<const uint8_t*>(msg), len);
    wire::Checked<wire::Frame> f = wire::decodeFrame(bytes);
    if (!f || f->type != wire::FrameType::kHeartbeat) return;
    if (!self->wanted_.contains(f->sender) || self->captured_.contains(f->sender)) return;
    wire::Checked<wire::Heartbeat> hb = wire::decodeHeartbeat(f->payload);
    if (!hb) return;
    self->captured_[f->sender] = Captured{tandem::Bytes(bytes.begin(), bytes.end()), *f, *hb};
  }

  cpg_handle_t handle_ = 0;
  int fd_ = -1;
  uint32_t nodeid_ = 0;
  std::set<std::string> wanted_;
  std::map<std::string, Captured> captured_;
  size_t sent_ = 0;
  size_t echoed_ = 0;
};

class UdpSender {
 public:
  UdpSender() {
    fd_ = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) die(std::string("socket: ") + std::strerror(errno));
    int off = 0;
    ::setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  }
  ~UdpSender() { ::close(fd_); }
  UdpSender(const UdpSender&) = delete;
  UdpSender& operator=(const UdpSender&) = delete;

  static sockaddr_in6 parse(const std::string& addr, uint16_t port) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(port);
    in_addr v4{};
    if (::inet_pton(AF_INET, addr.c_str(), &v4) == 1) {
      sa.sin6_addr.s6_addr[10] = 0xff;
      sa.sin6_addr.s6_addr[11] = 0xff;
      std::memcpy(&sa.sin6_addr.s6_addr[12], &v4, 4);
    } else if (::inet_pton(AF_INET6, addr.c_str(), &sa.sin6_addr) != 1) {
      die("not an IP address: " + addr);
    }
    return sa;
  }

  void send(const sockaddr_in6& to, const tandem::Bytes& bytes) {
    if (::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                 sizeof to) != static_cast<ssize_t>(bytes.size())) {
      die(std::string("sendto: ") + std::strerror(errno));
    }
  }

 private:
  int fd_ = -1;
};

struct Options {
  std::string group = "tandem";
  std::string key_file;
  std::vector<std::string> nodes;    // every configured node: who receives CPG frames
  std::vector<std::string> capture;  // whose heartbeats to capture (default: nodes)
  std::vector<std::pair<std::string, std::string>> udp;  // (node, address), repeatable
  // The node whose namespaces the injector runs in: its CPG nodeid and its UDP source
  // addresses are that node's, so a receiver binds what it sends to that node ("": unbound).
  std::string host;
  std::map<std::string, std::string> known;  // where receivers know each peer's UDP from
  uint16_t port = 5420;
  int count = 5;
  int capture_timeout_s = 15;
  bool no_cpg = false;
  std::string play;     // speak for this node (its tandemd stopped): reordered, stale_release
  std::string go_file;  // --play waits for this file before it speaks
};

// One kind of hostile frame: how to make the i-th copy, and what each receiver should say.
struct Kind {
  Kind(std::string n, std::string r, bool rep = false)
      : name(std::move(n)), reason(std::move(r)), replay(rep) {}

  std::string name;
  std::string reason;  // the rejection at every receiver, but see replay
  bool replay = false;
  // Builds the frames of this kind (count of them, or a fixed set).
  std::vector<tandem::Bytes> frames;
  // The sender named in each frame (for the replay rule); "" when not a decodable sender.
  std::vector<std::string> senders;
};

// path: "cpg", or the UDP destination address. Only a replay passes the checks before the
// path's binding: at its own sender it is unknown_node; a frame naming another node than the
// path says (the host over CPG; over UDP the host's address of the destination's family,
// which must be the one receivers know it by) is sender_mismatch.
std::string expectFor(const Kind& k, const std::string& frame_sender, const std::string& node,
                      const std::string& path, const Options& o) {
  if (!k.replay) return k.reason;
  if (frame_sender == node) return "unknown_node";
  if (o.host.empty()) return k.reason;
  if (frame_sender != o.host) return "sender_mismatch";
  if (path != "cpg") {
    auto it = o.known.find(frame_sender);
    const bool v6 = path.find(':') != std::string::npos;
    if (it == o.known.end() || (it->second.find(':') != std::string::npos) != v6) {
      return "sender_mismatch";
    }
  }
  return k.reason;
}

wire::Heartbeat hostileHeartbeat(const Captured& c, const std::string& claimed_sender) {
  wire::Heartbeat hb = c.heartbeat;
  hb.role = wire::Role::kActive;
  hb.priority = 255;
  hb.health = wire::kMaxHealth;
  hb.quorate = true;
  hb.tiebreaker_ok = true;
  hb.resources_held = true;
  hb.active_view = claimed_sender;
  hb.epoch = c.heartbeat.epoch + 1000;
  return hb;
}

// A signed heartbeat frame from `sender` under `ring`, numbered far ahead of the real sender
// so that, were it ever accepted, it would move the window and be noticed.
tandem::Bytes sealed(const Captured& c, const std::string& cluster, const std::string& sender,
                     uint64_t sequence, const wire::KeyRing& ring) {
  wire::Frame f;
  f.type = wire::FrameType::kHeartbeat;
  f.cluster = cluster;
  f.sender = sender;
  f.incarnation = c.frame.incarnation;
  f.sequence = sequence;
  auto payload = wire::encodeHeartbeat(hostileHeartbeat(c, sender));
  if (!payload) die("encodeHeartbeat: " + payload.error().message);
  f.payload = std::move(*payload);
  auto bytes = wire::encodeFrame(f, ring);
  if (!bytes) die("encodeFrame: " + bytes.error().message);
  return std::move(*bytes);
}

std::vector<Kind> buildKinds(const std::vector<const Captured*>& caps, const wire::KeyRing& real,
                             int count, const std::set<std::string>& configured) {
  const Captured& first = *caps.front();
  const std::string& cluster = first.frame.cluster;
  const uint16_t key_id = first.frame.key_id;
  wire::KeyRing wrong = ringWith(key_id, randomBytes(32));
  wire::KeyRing other_id = ringWith(key_id == 0xffff ? 0xfffe : 0xffff, randomBytes(32));
  std::string intruder = "intruder";
  while (configured.contains(intruder)) intruder += "x";
  uint64_t seq = first.frame.sequence + 100000;

  std::vector<Kind> kinds;
  auto add = [&](Kind k) { kinds.push_back(std::move(k)); };
  auto perSender = [&](const std::string& name, const std::string& reason,
                       const std::function<tandem::Bytes(const Captured&, int)>& make) {
    Kind k{name, reason};
    for (int i = 0; i < count; ++i) {
      const Captured& c = *caps[static_cast<size_t>(i) % caps.size()];
      k.frames.push_back(make(c, i));
      k.senders.push_back(c.frame.sender);
    }
    add(std::move(k));
  };

  perSender("forged", "bad_signature", [&](const Captured& c, int) {
    return sealed(c, cluster, c.frame.sender, ++seq, wrong);
  });
  perSender("unknown_key", "unknown_key", [&](const Captured& c, int) {
    return sealed(c, cluster, c.frame.sender, ++seq, other_id);
  });
  perSender("wrong_cluster", "wrong_cluster", [&](const Captured& c, int) {
    return sealed(c, cluster + "-other", c.frame.sender, ++seq, wrong);
  });
  {
    // Each captured frame, sent again count times: the first replay is as illegal as the last.
    Kind k{"replay", "replayed", true};
    for (const Captured* c : caps) {
      for (int i = 0; i < count; ++i) {
        k.frames.push_back(c->bytes);
        k.senders.push_back(c->frame.sender);
      }
    }
    add(std::move(k));
  }
  {
    Kind k{"truncated", "truncated"};
    for (const Captured* c : caps) {
      const size_t n = c->bytes.size();
      // Inside the magic, at the version, at the type, in the names, in the payload, inside the
      // MAC and one byte short: every field boundary class.
      for (size_t len :
           {size_t{1}, size_t{4}, size_t{5}, size_t{12}, n / 2, n - wire::kMacBytes, n - 1}) {
        k.frames.emplace_back(c->bytes.begin(), c->bytes.begin() + static_cast<ptrdiff_t>(len));
        k.senders.push_back("");
      }
    }
    add(std::move(k));
  }
  perSender("unknown_node", "unknown_node",
            [&](const Captured& c, int) { return sealed(c, cluster, intruder, ++seq, real); });
  {
    Kind k{"garbage", "bad_magic"};
    for (int i = 0; i < count; ++i) {
      tandem::Bytes b = randomBytes(16 + static_cast<size_t>(i) * 37);
      b[0] = 'X';
      k.frames.push_back(std::move(b));
      k.senders.push_back("");
    }
    add(std::move(k));
  }
  perSender("unknown_version", "unknown_version", [](const Captured& c, int) {
    tandem::Bytes b = c.bytes;
    b[4] = wire::kVersion + 1;
    return b;
  });
  perSender("unknown_type", "unknown_type", [](const Captured& c, int) {
    tandem::Bytes b = c.bytes;
    b[5] = 0x7f;
    return b;
  });
  perSender("oversized", "oversized", [](const Captured& c, int) {
    tandem::Bytes b = c.bytes;
    b.push_back(0);
    return b;
  });
  return kinds;
}

// A frame from the captured node itself, under its incarnation, numbered `sequence`.
tandem::Bytes asCaptured(const Captured& c, wire::FrameType type, tandem::Bytes payload,
                         uint64_t sequence, const wire::KeyRing& ring) {
  wire::Frame f;
  f.type = type;
  f.cluster = c.frame.cluster;
  f.sender = c.frame.sender;
  f.incarnation = c.frame.incarnation;
  f.sequence = sequence;
  f.payload = std::move(payload);
  auto bytes = wire::encodeFrame(f, ring);
  if (!bytes) die("encodeFrame: " + bytes.error().message);
  return std::move(*bytes);
}

// --play: speaks for c's node, whose tandemd is stopped by now. Returns the frames sent.
size_t play(const Captured& c, const wire::KeyRing& ring, const Options& o, UdpSender& udp) {
  auto heartbeat = wire::encodeHeartbeat(c.heartbeat);
  if (!heartbeat) die("encodeHeartbeat: " + heartbeat.error().message);
  if (c.heartbeat.epoch == 0) die("--play needs a captured epoch above 0 for a stale release");
  wire::Release rel;
  rel.kind = wire::ReleaseKind::kReleased;
  rel.epoch = c.heartbeat.epoch - 1;
  auto release = wire::encodeRelease(rel);
  if (!release) die("encodeRelease: " + release.error().message);
  const uint64_t s = c.frame.sequence;
  const std::vector<tandem::Bytes> frames{
      asCaptured(c, wire::FrameType::kHeartbeat, *heartbeat, s + 100, ring),
      asCaptured(c, wire::FrameType::kHeartbeat, *heartbeat, s + 102, ring),
      asCaptured(c, wire::FrameType::kHeartbeat, *heartbeat, s + 101, ring),
      asCaptured(c, wire::FrameType::kRelease, *release, s + 103, ring)};
  for (const auto& [node, addr] : o.udp) {
    sockaddr_in6 to = UdpSender::parse(addr, o.port);
    for (const tandem::Bytes& b : frames) {
      udp.send(to, b);
      ::usleep(5000);  // one bridge, in order: the third arrives after the second
    }
    std::cout << "expect path=udp:" << node << "/" << addr << " kind=reordered node=" << node
              << " reason=superseded count=1\n";
    std::cout << "played path=udp:" << node << "/" << addr << " kind=stale_release node=" << node
              << " as=" << c.frame.sender << " epoch=" << rel.epoch
              << " heartbeat_epoch=" << c.heartbeat.epoch << "\n";
    std::cout << "sent path=udp:" << node << "/" << addr << " kind=play count=" << frames.size()
              << "\n";
  }
  return frames.size() * o.udp.size();
}

std::string readKey(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read the key file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"frame_injector: send hostile tandem frames over CPG and UDP (lab test tool)"};
  Options o;
  std::string nodes;
  std::string capture;
  std::vector<std::string> udp;
  app.add_option("--group", o.group, "the CPG group (cluster.group)")->capture_default_str();
  app.add_option("--key", o.key_file, "the cluster's real key file (for unknown_node frames)")
      ->required();
  app.add_option("--nodes", nodes, "every configured node, comma-separated")->required();
  app.add_option("--capture", capture, "whose heartbeats to capture (default: --nodes)");
  app.add_option("--udp", udp, "NODE=ADDRESS: also send to NODE's heartbeat port");
  app.add_option("--port", o.port, "cluster.heartbeat_port")->capture_default_str();
  app.add_option("--count", o.count, "frames per kind and path")->capture_default_str();
  app.add_option("--capture-timeout", o.capture_timeout_s, "seconds")->capture_default_str();
  app.add_flag("--no-cpg", o.no_cpg, "send over UDP only (still captures over CPG)");
  app.add_option("--host", o.host, "the node whose namespaces this runs in (binds its frames)");
  std::vector<std::string> known;
  app.add_option("--known", known, "NODE=ADDRESS: the address receivers know NODE's UDP by");
  app.add_option("--play", o.play, "speak for NODE once its tandemd is stopped (see the header)");
  app.add_option("--go-file", o.go_file, "with --play: wait for this file before speaking");
  CLI11_PARSE(app, argc, argv);
  o.nodes = splitList(nodes);
  o.capture = capture.empty() ? o.nodes : splitList(capture);
  if (!o.play.empty()) {
    if (o.go_file.empty() || udp.empty()) die("--play needs --go-file and --udp");
    o.capture = {o.play};
  }
  for (const std::string& u : udp) {
    auto eq = u.find('=');
    if (eq == std::string::npos) die("--udp wants NODE=ADDRESS, not " + u);
    o.udp.emplace_back(u.substr(0, eq), u.substr(eq + 1));
  }
  for (const std::string& k : known) {
    auto eq = k.find('=');
    if (eq == std::string::npos) die("--known wants NODE=ADDRESS, not " + k);
    o.known[k.substr(0, eq)] = k.substr(eq + 1);
  }
  if (o.count < 1 || o.count > 1000) die("--count must be 1..1000");

  std::string secret = readKey(o.key_file);
  Member member(o.group);
  member.want({o.capture.begin(), o.capture.end()});
  auto deadline = Clock::now() + std::chrono::seconds(o.capture_timeout_s);
  while (member.captured().size() < o.capture.size()) {
    if (Clock::now() >= deadline) {
      die("captured no heartbeat from every one of " + capture + " within " +
          std::to_string(o.capture_timeout_s) + " s; is tandemd running and in group " + o.group +
          "?");
    }
    member.pump(std::chrono::milliseconds(100));
  }
  std::vector<const Captured*> caps;
  for (const std::string& s : o.capture) {
    const Captured& c = member.captured().at(s);
    caps.push_back(&c);
    std::cout << "captured sender=" << s << " key_id=" << c.frame.key_id
              << " incarnation=" << c.frame.incarnation << " sequence=" << c.frame.sequence
              << " bytes=" << c.bytes.size() << " role=" << wire::roleName(c.heartbeat.role)
              << "\n";
  }
  wire::KeyRing real = ringWith(caps.front()->frame.key_id, tandem::asBytes(secret));
  std::fill(secret.begin(), secret.end(), '\0');

  if (!o.play.empty()) {
    std::cout << std::flush;
    auto until = Clock::now() + std::chrono::seconds(60);
    while (::access(o.go_file.c_str(), F_OK) != 0) {
      if (Clock::now() >= until) die("--go-file " + o.go_file + " did not appear within 60 s");
      member.pump(std::chrono::milliseconds(10));
    }
    UdpSender udp_sender;
    size_t n = play(*caps.front(), real, o, udp_sender);
    std::cout << "done sent=" << n << std::endl;
    return 0;
  }

  std::set<std::string> configured(o.nodes.begin(), o.nodes.end());
  std::vector<Kind> kinds = buildKinds(caps, real, o.count, configured);

  UdpSender udp_sender;
  size_t total = 0;
  auto report = [&](const std::string& path, const std::string& dest, const Kind& k,
                    const std::vector<std::string>& to, size_t from, size_t n) {
    // Frames of one kind may name different senders: count the expectations per receiver.
    std::map<std::string, std::map<std::string, int>> expect;
    for (size_t i = from; i < from + n; ++i) {
      for (const std::string& node : to) {
        ++expect[node][expectFor(k, k.senders[i], node, dest, o)];
      }
    }
    for (const auto& [node, reasons] : expect) {
      for (const auto& [reason, c] : reasons) {
        std::cout << "expect path=" << path << " kind=" << k.name << " node=" << node
                  << " reason=" << reason << " count=" << c << "\n";
      }
    }
    std::cout << "sent path=" << path << " kind=" << k.name << " count=" << n << "\n";
  };

  for (const Kind& k : kinds) {
    if (!o.no_cpg) {
      for (const tandem::Bytes& b : k.frames) member.send(b);
      report("cpg", "cpg", k, o.nodes, 0, k.frames.size());
      total += k.frames.size();
      member.pump(std::chrono::milliseconds(0));
    }
    for (const auto& [node, addr] : o.udp) {
      sockaddr_in6 to = UdpSender::parse(addr, o.port);
      for (const tandem::Bytes& b : k.frames) {
        udp_sender.send(to, b);
        // Paced through the CPG loop: a burst must not overflow the receiver's socket buffer,
        // which would make the expected counts a matter of luck.
        member.pump(std::chrono::milliseconds(2));
      }
      report("udp:" + node + "/" + addr, addr, k, {node}, 0, k.frames.size());
      total += k.frames.size();
    }
  }
  // Our own messages come back once the group has delivered them to every member.
  deadline = Clock::now() + std::chrono::seconds(10);
  while (member.echoed() < member.sent() && Clock::now() < deadline) {
    member.pump(std::chrono::milliseconds(50));
  }
  std::cout << "delivered cpg=" << member.echoed() << " of=" << member.sent() << "\n";
  std::cout << "done sent=" << total << std::endl;
  return member.echoed() == member.sent() ? 0 : 1;
}
