# The dns checker's lab cases, against dnsmasq (a real DNS server from Debian) in the real
# servers' namespaces. Sourced by health_checkers_lab_test, which has the lab up (d1 runs the
# checks, rs1 and rs2 are real servers) and calls health_cases_dns; check_expect records each
# case. dnsmasq is told everything on its command line: no config file, no /etc/resolv.conf, no
# /etc/hosts, no DHCP (no dhcp-range), and --local makes it the authority for example.test, so an
# unknown name there is NXDOMAIN rather than a question it would forward.

_dns_serve() {  # _dns_serve NODE NAME PORT ADDRESS...: dnsmasq for example.test on NODE
  local node=$1 name=$2 port=$3
  shift 3
  local listen=()
  for a in "$@"; do listen+=("--listen-address=$a"); done
  node_spawn "$node" "$name" dnsmasq --no-daemon --log-facility=- --conf-file=/dev/null \
    --no-resolv --no-hosts --no-poll --bind-interfaces "${listen[@]}" --port="$port" \
    --local=/example.test/ --address=/www.example.test/198.51.100.7 \
    --address=/www6.example.test/2001:db8::7 --mx-host=example.test,mail.example.test,10 \
    --txt-record=example.test,"v=spf1 ip4:198.51.100.0/24 -all" >/dev/null
}

_dns_listening() {  # _dns_listening NODE PORT: a UDP socket is bound to PORT in NODE
  [[ -n $(node_exec "$1" ss -Hlun "sport = :$2") ]]
}

health_cases_dns() {
  if ! command -v dnsmasq >/dev/null; then
    echo "SKIPPED: dns cases: no dnsmasq (packaging/build-deps installs dnsmasq-base)"
    return 0
  fi
  local rs1 rs1v6 rs2
  rs1=$(lab_addr rs1)
  rs1v6=$(lab_addr rs1 eth0 6)
  rs2=$(lab_addr rs2)
  _dns_serve rs1 dnsmasq 53 "$rs1" "$rs1v6"
  # On rs2, one to black-hole, so that rs1's stays reachable for every other case.
  _dns_serve rs2 dnsmasq-hole 5353 "$rs2"
  # A responder that answers every datagram with 4 bytes of junk. dd takes the query first: a
  # child that left it unread would fail socat's write to it, and nothing would be sent back.
  node_spawn rs2 dns-junk socat "UDP4-RECVFROM:5300,bind=$rs2,fork" \
    "SYSTEM:dd bs=4096 count=1 status=none of=/dev/null; printf junk" >/dev/null
  wait_until 10 _dns_listening rs1 53 && wait_until 10 _dns_listening rs2 5353 &&
    wait_until 10 _dns_listening rs2 5300 || {
    echo "FAIL: dns cases: dnsmasq or socat did not start"
    return 1
  }

  local www=(--type dns --set query_name=www.example.test --timeout 500ms)
  check_expect "dns: dnsmasq answers A with the expected address" healthy "NOERROR, 1 answer" \
    -- "${www[@]}" --address "$rs1:53" --set expect_answer=198.51.100.7
  check_expect "dns: AAAA over IPv6" healthy "NOERROR, 1 answer" \
    -- --type dns --set query_name=www6.example.test --set query_type=AAAA \
    --set expect_answer=2001:db8::7 --address "[$rs1v6]:53" --timeout 500ms
  check_expect "dns: MX as preference and exchange" healthy "NOERROR" \
    -- --type dns --set query_name=example.test --set query_type=MX \
    --set "expect_answer=10 mail.example.test" --address "$rs1:53" --timeout 500ms
  check_expect "dns: TXT as its text" healthy "NOERROR" \
    -- --type dns --set query_name=example.test --set query_type=TXT \
    --set "expect_answer=198.51.100.0/24 -all" --address "$rs1:53" --timeout 500ms
  check_expect "dns: an unknown name when NOERROR is expected" unhealthy \
    "rcode NXDOMAIN, expected NOERROR" \
    -- --type dns --set query_name=nowhere.example.test --address "$rs1:53" --timeout 500ms
  check_expect "dns: an unknown name when NXDOMAIN is expected" healthy "NXDOMAIN" \
    -- --type dns --set query_name=nowhere.example.test --set expect_rcode=NXDOMAIN \
    --address "$rs1:53" --timeout 500ms
  check_expect "dns: another address than expected" unhealthy \
    'no answer contains "198.51.100.8" (got 198.51.100.7)' \
    -- "${www[@]}" --address "$rs1:53" --set expect_answer=198.51.100.8
  check_expect "dns: a port nothing listens on" unhealthy "connection refused" \
    -- "${www[@]}" --address "$rs1:5399"
  check_expect "dns: a server that answers junk" unhealthy \
    "garbage reply: 4 bytes, shorter than a DNS header" -- "${www[@]}" --address "$rs2:5300"
  check_expect "dns: rs2's server answers before it is black-holed" healthy "NOERROR" \
    -- "${www[@]}" --address "$rs2:5353"
  blackhole rs2 udp 5353
  check_expect "dns: a black-holed server times out" unhealthy "timed out after 500 ms" \
    -- "${www[@]}" --address "$rs2:5353"
}
