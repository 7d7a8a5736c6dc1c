#!/usr/bin/env python3
# Captures real kernel netlink replies into test/fuzz/corpus/kernel_reply: each reply datagram as
# the kernel sent it, behind the selector byte kernel_reply_fuzz reads (0 rtnetlink, 1 IPVS with
# the VM's family id 0x20, 2 IPVS before the family is known). Run as root inside a network
# namespace made for it, so that only test addresses are captured:
#
#   ip netns add cap; ip -n cap link set lo up
#   ip -n cap addr add 198.51.100.10/24 dev lo; ip -n cap addr add 2001:db8::10/64 dev lo
#   ip netns exec cap test/fuzz/capture_kernel_replies.py rtnl test/fuzz/corpus/kernel_reply
#
# and, for IPVS, in the VM lab (test/vm/run --share DIR -- SCRIPT) after
#   ipvsadm -A -t 198.51.100.50:80 -s wrr
#   ipvsadm -a -t 198.51.100.50:80 -r 203.0.113.11:80 -m -w 3
#   ipvsadm -a -t 198.51.100.50:80 -r 203.0.113.12:80 -m -w 0
#   ipvsadm -A -u 198.51.100.51:53 -s rr -p 300; ipvsadm -A -t [2001:db8::50]:443 -s sh
#   capture_kernel_replies.py ipvs DIR
# (the corpus was captured so on Debian 12's 6.1.0-57 kernel: dumps, the family lookup, the
# timeouts, and the kernel's EEXIST and ENODEV error acks with their extended ack).
import os, socket, struct, sys

NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
seq = [100]

def msg(sock, typ, flags, body):
    seq[0] += 1
    sock.send(struct.pack("=IHHII", 16 + len(body), typ, flags, seq[0], 0) + body)

def replies(sock, limit=4):
    got = []
    while len(got) < limit:
        d = sock.recv(65536)
        got.append(d)
        t = struct.unpack_from("=H", d, 4)[0]
        if t in (2, 3):  # NLMSG_ERROR, NLMSG_DONE
            break
    return got

def save(name, selector, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([selector]) + data)

def attr(t, payload):
    l = 4 + len(payload)
    return struct.pack("=HH", l, t) + payload + b"\0" * ((4 - l % 4) % 4)

if sys.argv[1] == "rtnl":
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.setsockopt(270, 11, 1)  # NETLINK_EXT_ACK
    s.bind((0, 0))
    RTM_GETADDR, RTM_NEWADDR, RTM_GETLINK = 22, 20, 18
    msg(s, RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, struct.pack("=BBBBI", 0, 0, 0, 0, 0))
    for i, d in enumerate(replies(s)):
        save("rtnl-getaddr-dump-%d" % i, 0, d)
    msg(s, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, struct.pack("=BBHiII", 0, 0, 0, 0, 0, 0))
    for i, d in enumerate(replies(s)):
        save("rtnl-getlink-dump-%d" % i, 0, d)
    # An address on an interface that does not exist: the kernel's error ack, with extack.
    body = struct.pack("=BBBBI", socket.AF_INET, 32, 0, 0, 9999) + attr(2, socket.inet_aton("198.51.100.77"))
    msg(s, RTM_NEWADDR, NLM_F_REQUEST | NLM_F_ACK | 0x400, body)
    save("rtnl-newaddr-no-such-device", 0, replies(s)[0])
else:
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
    s.setsockopt(270, 11, 1)
    s.bind((0, 0))
    GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, CTRL_ATTR_FAMILY_ID = 16, 3, 2, 1
    msg(s, GENL_ID_CTRL, NLM_F_REQUEST, struct.pack("=BBH", CTRL_CMD_GETFAMILY, 1, 0) + attr(CTRL_ATTR_FAMILY_NAME, b"IPVS\0"))
    fam = replies(s, 1)[0]
    save("ipvs-family-lookup", 2, fam)
    # find the family id
    at = 20
    fid = None
    while at + 4 <= len(fam):
        l, t = struct.unpack_from("=HH", fam, at)
        if t == CTRL_ATTR_FAMILY_ID:
            fid = struct.unpack_from("=H", fam, at + 4)[0]
        at += (l + 3) & ~3
    print("IPVS family id", fid)
    IPVS_CMD_GET_SERVICE, IPVS_CMD_GET_DEST, IPVS_CMD_GET_CONFIG, IPVS_CMD_NEW_SERVICE = 4, 8, 13, 1
    msg(s, fid, NLM_F_REQUEST | NLM_F_DUMP, struct.pack("=BBH", IPVS_CMD_GET_SERVICE, 1, 0))
    for i, d in enumerate(replies(s)):
        save("ipvs-services-dump-%d" % i, 1, d)
    # the destinations of tcp 198.51.100.50:80 (IPVS_CMD_ATTR_SERVICE nested)
    svc = attr(1, struct.pack("=H", socket.AF_INET)) + attr(2, struct.pack("=H", socket.IPPROTO_TCP)) + \
        attr(3, socket.inet_aton("198.51.100.50") + b"\0" * 12) + attr(4, struct.pack("!H", 80))
    msg(s, fid, NLM_F_REQUEST | NLM_F_DUMP, struct.pack("=BBH", IPVS_CMD_GET_DEST, 1, 0) + attr(1 | 0x8000, svc))
    for i, d in enumerate(replies(s)):
        save("ipvs-dests-dump-%d" % i, 1, d)
    msg(s, fid, NLM_F_REQUEST, struct.pack("=BBH", IPVS_CMD_GET_CONFIG, 1, 0))
    save("ipvs-config", 1, replies(s, 1)[0])
    # the same service again: EEXIST, the kernel's error ack
    full = svc + attr(6, b"wrr\0") + attr(7, struct.pack("=II", 0, 0xffffffff)) + attr(8, struct.pack("=I", 0)) + attr(9, struct.pack("=I", 0xffffffff))
    msg(s, fid, NLM_F_REQUEST | NLM_F_ACK, struct.pack("=BBH", IPVS_CMD_NEW_SERVICE, 1, 0) + attr(1 | 0x8000, full))
    save("ipvs-new-service-exists", 1, replies(s, 1)[0])
