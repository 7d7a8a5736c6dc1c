# shellcheck shell=bash
# udp check cases for health_checkers_lab_test, which sources this file and calls
# health_cases_udp with the lab up (d1 runs `tandem check run`, the servers run in rs1) and
# node_spawn, wait_until, check_expect and blackhole defined. The servers are a small python3
# responder: socat's UDP-RECVFROM,fork with SYSTEM loses replies (its child dies writing the
# datagram to a command that has already exited) and splits big ones into several datagrams.

# The tools these cases run, for the runner to check before the lab comes up.
HEALTH_CASES_TOOLS+=(python3 ss)

# _udp_listening NODE PORT: something is bound to UDP PORT in NODE.
_udp_listening() { node_exec "$1" ss -Hlnu "sport = :$2" | grep -q .; }

# _udp_spawn NAME PORT CMD...: starts a UDP server in rs1 and waits until it is bound.
_udp_spawn() {
  local name=$1 port=$2
  shift 2
  node_spawn rs1 "$name" "$@" >/dev/null
  wait_until 10 _udp_listening rs1 "$port"
}

# A python3 UDP server on PORT (IPv4 and IPv6): answers each datagram with REPLY, or with
# `bytes:N`, N bytes 0..255 over and over (one datagram), or not at all with `silent`.
_UDP_RESPONDER='
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1])))
mode = sys.argv[2]
if mode.startswith("bytes:"):
    reply = bytes(i % 256 for i in range(int(mode[6:])))
else:
    reply = mode.encode()
while True:
    data, peer = s.recvfrom(65535)
    if mode != "silent":
        s.sendto(reply, peer)
'

health_cases_udp() {
  local rs v6 udp=(--type udp --timeout 500ms --set payload=ping)
  rs=$(lab_addr rs1)
  v6=$(lab_addr rs1 eth0 6)

  _udp_spawn udp-pong 5301 python3 -c "$_UDP_RESPONDER" 5301 pong || return 1
  _udp_spawn udp-nope 5302 python3 -c "$_UDP_RESPONDER" 5302 nope || return 1
  _udp_spawn udp-hole 5303 python3 -c "$_UDP_RESPONDER" 5303 pong || return 1
  _udp_spawn udp-silent 5304 python3 -c "$_UDP_RESPONDER" 5304 silent || return 1
  _udp_spawn udp-big 5305 python3 -c "$_UDP_RESPONDER" 5305 bytes:60000 || return 1
  blackhole rs1 udp 5303

  check_expect "udp: a reply holding expect_reply" healthy 'reply contains "pong"' -- \
    "${udp[@]}" --address "$rs:5301" --set expect_reply=pong
  check_expect "udp: any reply without expect_reply" healthy "reply of 4 bytes" -- \
    "${udp[@]}" --address "$rs:5301"
  check_expect "udp: over IPv6" healthy 'reply contains "pong"' -- \
    "${udp[@]}" --address "[$v6]:5301" --set expect_reply=pong
  check_expect "udp: a wrong reply" unhealthy 'reply does not contain "pong": got "nope"' -- \
    "${udp[@]}" --address "$rs:5302" --set expect_reply=pong
  check_expect "udp: a closed port" unhealthy "port unreachable" -- \
    "${udp[@]}" --address "$rs:5399"
  check_expect "udp: black-holed" unhealthy "timed out after 500 ms" -- \
    "${udp[@]}" --address "$rs:5303"
  check_expect "udp: a server that never answers" unhealthy "timed out after 500 ms" -- \
    "${udp[@]}" --address "$rs:5304"
  check_expect "udp: accept_silence, a server that never answers" healthy \
    "no reply and no port unreachable within 500 ms" -- \
    "${udp[@]}" --address "$rs:5304" --set accept_silence=true
  # What accept_silence cannot tell apart (conf/reference.md says so): black-holed passes.
  check_expect "udp: accept_silence, black-holed" healthy \
    "no reply and no port unreachable within 500 ms" -- \
    "${udp[@]}" --address "$rs:5303" --set accept_silence=true
  check_expect "udp: accept_silence, a closed port" unhealthy "port unreachable" -- \
    "${udp[@]}" --address "$rs:5399" --set accept_silence=true
  check_expect "udp: accept_silence, a wrong reply" unhealthy 'reply does not contain "pong"' -- \
    "${udp[@]}" --address "$rs:5302" --set accept_silence=true --set expect_reply=pong
  check_expect "udp: a 60000-byte binary reply, expect_reply absent" unhealthy \
    'reply does not contain "pong": got "\x00\x01\x02' -- \
    "${udp[@]}" --address "$rs:5305" --set expect_reply=pong
  check_expect "udp: a 60000-byte binary reply, any reply" healthy "reply of 60000 bytes" -- \
    "${udp[@]}" --address "$rs:5305"
}
