# shellcheck shell=bash
# The connection-sync pair of issue 11, shared by test/vm/tests/sync_sessions (does every
# session survive?) and test/bench/sync_bench (how long do they stall, and how many hold?).
# Source it after test/lab/lab.sh and test/vm/lib.sh, with build= set; it needs a kernel with
# IPVS (the VM lab).
#
# The pair: lab_up 2 with real corosync and tandemd on d1 (priority 200) and d2 (100), the VIPs
# 198.51.100.50 (eth0) and 203.0.113.1 (eth1, the real servers' gateway), and these services over
# rs1 (203.0.113.21) and rs2 (203.0.113.22), each served by one test/bench process per real server
# that names itself in its answers:
#   :7000  NAT, rr: session_probe echo (long-lived sessions)
#   :7100  DR, rr: session_probe echo (the VIP on the real servers' lo, arp_ignore 1,
#          arp_announce 2; they answer from the VIP through their gateway, the ACTIVE, which
#          routes it on: accept_local and rp_filter 0 on the directors' eth1)
#   :7001  NAT, rr, persistent 300 s: session_probe echo (templates)
#   :7002  NAT, rr: vip_probe serve (a new connection answered and closed: the service gap)
#
#   pair_write_conf true|false [manual|auto]  [sync] enabled, cluster.failback; onto both
#   pair_up SYNC FAILBACK     the lab, the servers, corosync and tandemd; d1 ACTIVE, d2 BACKUP
#   stack                     "tandem", or "keepalived" after pair_to_keepalived
#   d1_active, d2_active      by tandemd's role file, or under keepalived by who holds the VIP
#   cables NODE up|down       both of NODE's links at once
#   d2_entries [PORT]         ESTABLISHED connections to the VIP:PORT (7000) in d2's IPVS table
#   table_states NODE PORT    NODE's connections to the VIP:PORT counted by IPVS state
#   served                    one session each through NAT :7000 and DR :7100 answers
#   kill_active_d1, restart_d1  kill -9 of d1's stack (tandemd and corosync, or keepalived's
#                             three processes), and its start again
#   crash_d1, reboot_d1       d1's links down with the kill; d1's kernel cleared as a reboot
#                             clears it (services, sync daemons, VIPs), its links up, the start
#   pair_to_keepalived        stops tandemd, clears what it left, starts Debian's keepalived with
#                             lvs_sync_daemon on eth1 (VRRP advert 1 s, default preempt)
#   fail MESSAGE              FAIL: MESSAGE, the tail of both directors' logs, exit 1

: "${build:?sync_pair.sh: set build= to the build directory first}"
tandemd=$build/daemon/tandemd/tandemd
tandem=$build/tools/tandem/tandem
probe=$build/test/bench/session_probe
vprobe=$build/test/bench/vip_probe

pair_check() {  # skips (vm_skip) when something the pair needs is missing
  local b reason
  for b in "$tandemd" "$tandem" "$probe" "$vprobe"; do
    [[ -x $b ]] || vm_skip "no $b (build it: ninja -C $build tandemd tandem session_probe vip_probe)"
  done
  command -v keepalived >/dev/null 2>&1 || vm_skip "no keepalived (packaging/build-deps installs it): the comparison"
  command -v ipvsadm >/dev/null 2>&1 || vm_skip "no ipvsadm (apt-get install ipvsadm): the independent reader"
  reason=$(lab_check_tools) || vm_skip "$reason"
  vm_need_ipvs
}

fail() {
  echo "FAIL: $*"
  if [[ -n ${LAB_DIR:-} ]]; then
    for n in d1 d2; do
      echo "----- $n/tandemd.log (last 20 lines)"
      tail -20 "$LAB_DIR/$n/tandemd.log" 2>/dev/null
      # The whole logs beside the report, where the VM's lab directory does not outlive it.
      [[ -n ${TANDEM_REPORT_DIR:-} ]] && cp "$LAB_DIR/$n/tandemd.log" "$TANDEM_REPORT_DIR/fail-$n-tandemd.log" 2>/dev/null
    done
  fi
  exit 1
}

# The services, one per line: NAME PORT FORWARDING PERSISTENCE_S SERVER (the test/bench
# process each real server runs on PORT). tandem's config, keepalived's and the servers come
# from it.
pair_services=(
  "echo 7000 nat 0 session_probe"
  "echo-dr 7100 dr 0 session_probe"
  "sticky 7001 nat 300 session_probe"
  "new 7002 nat 0 vip_probe"
)
pair_services_toml() {
  local line name port fwd persist _ rs
  for line in "${pair_services[@]}"; do
    read -r name port fwd persist _ <<<"$line"
    printf '[[virtual_server]]\nname = "%s"\naddress = "198.51.100.50:%s"\nscheduler = "rr"\nforwarding = "%s"\n' \
      "$name" "$port" "$fwd"
    ((persist > 0)) && printf 'persistence_timeout = "%ss"\n' "$persist"
    for rs in 21 22; do printf '[[virtual_server.real_server]]\naddress = "203.0.113.%s:%s"\n' "$rs" "$port"; done
  done
}

pair_write_conf() {
  cat >"$LAB_DIR/tandem.conf" <<CONF
[cluster]
name = "sync"
failback = "${2:-manual}"
[[cluster.key]]
id = 1
file = "authkey"
[[node]]
name = "d1"
priority = 200
interfaces = ["eth0", "eth1"]
[[node]]
name = "d2"
priority = 100
interfaces = ["eth0", "eth1"]
[[vip]]
address = "198.51.100.50/24"
interface = "eth0"
[[vip]]
address = "203.0.113.1/24"
interface = "eth1"
$(pair_services_toml)
[sync]
enabled = $1
interface = "eth1"
sync_id = 9
[ipvs]
monitor_interval = "2s"
CONF
  local n
  for n in d1 d2; do node_put $n /etc/tandem/tandem.conf <"$LAB_DIR/tandem.conf"; done
}

pair_up() {  # pair_up true|false manual|auto
  local n rs line name port server
  lab_trap
  lab_up 2 >/dev/null 2>&1 || fail "lab_up 2"
  "$tandem" keygen "$LAB_DIR/tandem-authkey" >/dev/null || fail "tandem keygen"
  pair_write_conf "$1" "$2"
  for n in d1 d2; do
    node_put $n /etc/tandem/authkey 0600 <"$LAB_DIR/tandem-authkey"
    # DR: the real servers answer from the VIP through their gateway, the ACTIVE, which routes
    # the answer on; a datagram from one of its own addresses is dropped unless accept_local.
    node_exec $n sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
      net.ipv4.conf.eth1.rp_filter=0 net.ipv4.conf.eth1.accept_local=1
  done
  for rs in rs1 rs2; do
    node_exec $rs ip route add default via 203.0.113.1
    # DR: the VIP on lo, never answered for in ARP (the directors own it on the segment).
    node_exec $rs sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
      net.ipv4.conf.eth0.arp_ignore=1 net.ipv4.conf.eth0.arp_announce=2
    node_exec $rs ip addr add 198.51.100.50/32 dev lo
    for line in "${pair_services[@]}"; do
      read -r name port _ _ server <<<"$line"
      if [[ $server == vip_probe ]]; then
        node_spawn $rs "$name" "$vprobe" serve --port "$port" --name $rs >/dev/null
      else
        node_spawn $rs "$name" "$probe" echo --port "$port" --name $rs >/dev/null
      fi
    done
  done
  corosync_start d1 d2 >/dev/null || fail "corosync did not start"
  for n in d1 d2; do
    node_spawn $n tandemd "$tandemd" --foreground --config /etc/tandem/tandem.conf >/dev/null
  done
  wait_until 30 d1_active >/dev/null || fail "d1 did not become ACTIVE with d2 BACKUP"
}

stack=tandem
role_is() { node_read "$1" /var/lib/tandem/role && [[ $REPLY == "$2"* ]]; }
holds_vip() { [[ $(node_exec "$1" ip -o addr show dev eth0) == *" 198.51.100.50/"* ]]; }
d1_active() {
  if [[ $stack == keepalived ]]; then
    holds_vip d1 && ! holds_vip d2
  else
    role_is d1 ACTIVE && role_is d2 BACKUP
  fi
}
d2_active() { if [[ $stack == keepalived ]]; then holds_vip d2; else role_is d2 ACTIVE; fi; }

cables() {
  printf 'link set %s-eth0 %s\nlink set %s-eth1 %s\n' "$1" "$2" "$1" "$2" |
    ip -n "$(lab_netns sw)" -batch -
}
d2_entries() { node_exec d2 ipvsadm -Lnc | grep -c "ESTABLISHED.*198.51.100.50:${1:-7000}"; }
# table_states NODE PORT: NODE's connections to the VIP:PORT by IPVS state ("ESTABLISHED:200 ...")
table_states() {
  node_exec "$1" ipvsadm -Lnc | awk -v vip="198.51.100.50:$2" '$5 == vip { n[$3]++ }
    END { for (s in n) printf "%s:%d ", s, n[s] }'
}
served() {
  local port
  for port in 7000 7100; do
    node_exec client "$probe" run --target 198.51.100.50:$port --sessions 1 --interval-ms 100 \
      --duration-s 1 >/dev/null 2>&1 || return 1
  done
}

kill_active_d1() {
  if [[ $stack == keepalived ]]; then
    ka_kill9 d1
  else
    node_kill d1 tandemd KILL
    corosync_kill d1 || fail "corosync on d1 did not die"
  fi
}
restart_d1() {
  if [[ $stack == keepalived ]]; then
    ka_start d1
  else
    # The killed run's libqb files and pid records go; the VIPs and the sync master it left in
    # d1's kernel are what the new tandemd must release before anything else.
    wait_until 10 _lab_not node_running d1 tandemd >/dev/null || fail "tandemd on d1 did not die"
    corosync_start d1 >/dev/null || fail "corosync did not start again on d1"
    node_spawn d1 tandemd "$tandemd" --foreground --config /etc/tandem/tandem.conf >/dev/null
  fi
}

# The ACTIVE dies: both of d1's links go down with its daemons (kill -9), the node gone at once
# as a power loss takes it, and what its kernel holds cannot answer any more.
crash_d1() {
  cables d1 down
  kill_active_d1
}
# It comes back as from a reboot: what a reboot clears in its kernel goes first (the services,
# the sync daemons, the VIPs), then the links come up and its daemons start. The connection
# entries stay: IPVS has no call that drops them, short of a new network namespace. Those of
# sessions that ended on d2 meanwhile stay ESTABLISHED in d1's table (15 min), so they count in
# the table a sync-aware failback compares.
reboot_d1() {
  local v
  [[ $stack == tandem ]] &&
    { wait_until 10 _lab_not node_running d1 tandemd >/dev/null || fail "tandemd on d1 did not die"; }
  node_exec d1 ipvsadm -C
  node_exec d1 ipvsadm --stop-daemon master >/dev/null 2>&1
  node_exec d1 ipvsadm --stop-daemon backup >/dev/null 2>&1
  for v in "198.51.100.50/24 dev eth0" "203.0.113.1/24 dev eth1"; do
    # shellcheck disable=SC2086 # the address and its device, two words each
    node_exec d1 ip addr del $v 2>/dev/null
  done
  cables d1 up
  restart_d1
}

# --- keepalived: Debian's, with its lvs_sync_daemon (keepalived.conf(5): global_defs, the sync
# daemons follow the VRRP instance) and its default preempt, what tandem's "auto" is compared with.
declare -A karun=([d1]=0 [d2]=0)
ka_start() {
  karun[$1]=$((karun[$1] + 1))
  node_spawn "$1" "keepalived${karun[$1]}" keepalived --dont-fork --log-console \
    --use-file /etc/keepalived/keepalived.conf --pid "/var/run/ka-$1.pid" \
    --vrrp_pid "/var/run/ka-vrrp-$1.pid" --checkers_pid "/var/run/ka-check-$1.pid" >/dev/null
}
# A crash takes the parent and both children: a child left alone would release cleanly.
ka_kill9() {
  local f pids=() pid
  for f in vrrp check; do
    pid=$(node_exec "$1" cat "/var/run/ka-$f-$1.pid" 2>/dev/null)
    [[ $pid =~ ^[0-9]+$ ]] && pids+=("$pid")
  done
  # Frozen first: killed before the parent, a child is respawned; after, it may see the death.
  for pid in "${pids[@]}"; do node_exec "$1" kill -STOP "$pid"; done
  node_kill "$1" "keepalived${karun[$1]}" KILL
  for pid in "${pids[@]}"; do node_exec "$1" kill -KILL "$pid"; done
  wait_until 5 _lab_not node_running "$1" "keepalived${karun[$1]}" >/dev/null ||
    fail "keepalived on $1 did not die"
  node_exec "$1" rm -f "/var/run/ka-vrrp-$1.pid" "/var/run/ka-check-$1.pid" "/var/run/ka-$1.pid"
}
ka_conf() {  # ka_conf NODE PRIORITY
  local rs services="" line port fwd persist kind extra
  for line in "${pair_services[@]}"; do
    read -r _ port fwd persist _ <<<"$line"
    kind=${fwd^^} extra=""
    ((persist > 0)) && extra="  persistence_timeout $persist"
    services+="virtual_server 198.51.100.50 $port {
  lb_algo rr
  lb_kind $kind
  protocol TCP
$extra
"
    for rs in 21 22; do services+="  real_server 203.0.113.$rs $port {
    weight 1
  }
"; done
    services+="}
"
  done
  cat <<CONF
global_defs {
  router_id $1
  vrrp_version 3
  lvs_sync_daemon eth1 VI_1 id 9
}
vrrp_instance VI_1 {
  state BACKUP
  interface eth0
  virtual_router_id 51
  priority $2
  advert_int 1
  virtual_ipaddress {
    198.51.100.50/24 dev eth0
    203.0.113.1/24 dev eth1
  }
}
$services
CONF
}
ka_ready() {
  d1_active && [[ $(node_exec d1 ipvsadm -L --daemon) == *"master sync daemon (mcast=eth1, syncid=9"* ]] &&
    [[ $(node_exec d2 ipvsadm -L --daemon) == *"backup sync daemon (mcast=eth1, syncid=9"* ]]
}
pair_to_keepalived() {
  local n
  for n in d1 d2; do node_kill $n tandemd TERM; done
  for n in d1 d2; do
    wait_until 20 _lab_not node_running $n tandemd >/dev/null || fail "tandemd on $n did not stop"
    # What tandemd leaves by design (its services, the backup daemon) goes: keepalived starts clean.
    node_exec $n ipvsadm -C
    node_exec $n ipvsadm --stop-daemon master >/dev/null 2>&1
    node_exec $n ipvsadm --stop-daemon backup >/dev/null 2>&1
    node_exec $n mkdir -p /var/run /etc/keepalived
  done
  ka_conf d1 200 | node_put d1 /etc/keepalived/keepalived.conf
  ka_conf d2 100 | node_put d2 /etc/keepalived/keepalived.conf
  stack=keepalived
  ka_start d1 && ka_start d2
  wait_until 30 ka_ready >/dev/null ||
    fail "keepalived: d1 does not hold the VIP with its sync master and d2 its backup: d1 $(node_exec d1 ipvsadm -L --daemon | tr '\n' ';') d2 $(node_exec d2 ipvsadm -L --daemon | tr '\n' ';')"
}
