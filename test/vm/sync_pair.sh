# shellcheck shell=bash
# The connection-sync pair of issue 11, shared by test/vm/tests/sync_sessions (does every
# session survive?), test/vm/bench/sync_sessions_keepalived (the same phases, tandem beside
# keepalived) and test/bench/sync_bench (how long do they stall, and how many hold?).
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
#   served                    one line each through NAT :7000 and DR :7100 is echoed by rs1/rs2
#   kill_active_d1, restart_d1  kill -9 of d1's stack (tandemd and corosync, or keepalived's
#                             three processes), and its start again
#   crash_d1, reboot_d1       d1's links down with the kill; d1's kernel cleared as a reboot
#                             clears it (services, sync daemons, VIPs), its links up, the start
#   pair_to_keepalived        stops tandemd, clears what it left, starts Debian's keepalived with
#                             lvs_sync_daemon on eth1 (VRRP advert 1 s, default preempt)
#   fail MESSAGE              FAIL: MESSAGE, the tail of both directors' logs, exit 1
#   phase_run NAME cut|kill   sessions through a failure of d1 and its return (below)

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
  local f
  echo "FAIL: $*"
  if [[ -n ${LAB_DIR:-} ]]; then
    for f in "$LAB_DIR"/client/*.log; do
      [[ -f $f ]] && { echo "----- client/${f##*/} (last 12 lines)"; tail -12 "$f"; }
    done
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

# tandem's cluster timers in the pair's config: the shipped ones, unless the caller sets others
# before pair_up (test/vm/tests/sync_sessions does, and says why). sync_settle is the default.
: "${pair_hb_ms:=200}" "${pair_dead_ms:=1000}"
pair_sync_settle_ms=10000

pair_write_conf() {
  cat >"$LAB_DIR/tandem.conf" <<CONF
[cluster]
name = "sync"
failback = "${2:-manual}"
heartbeat_interval = "${pair_hb_ms}ms"
dead_time = "${pair_dead_ms}ms"
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

# pair_up true|false manual|auto [servers]: the lab, the real servers and the tandem pair, d1
# ACTIVE; with "servers", no corosync and no tandemd (a run of keepalived's phases only).
pair_up() {
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
  [[ ${3:-} == servers ]] && return 0
  corosync_start d1 d2 >/dev/null || fail "corosync did not start"
  # d1 first, then d2: started together, the one whose process is ready first under a loaded VM
  # hears nobody for dead_time and rightly takes the service (failback manual keeps it there).
  node_spawn d1 tandemd "$tandemd" --foreground --config /etc/tandem/tandem.conf >/dev/null
  wait_until 30 role_is d1 ACTIVE >/dev/null || fail "d1 did not become ACTIVE alone"
  node_spawn d2 tandemd "$tandemd" --foreground --config /etc/tandem/tandem.conf >/dev/null
  wait_until 30 d1_active >/dev/null || fail "d1 did not stay ACTIVE with d2 BACKUP"
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
# One line over one connection each (socat), and a real server's echo of it: ends on the answer,
# not on a clock (a connect gets 10 s).
served() {
  local port got
  for port in 7000 7100; do
    got=$(echo "1 0" | node_exec client timeout 30 socat -t 10 -T 10 - \
      "TCP:198.51.100.50:$port,connect-timeout=10" 2>/dev/null)
    [[ $got == "rs1 1 0" || $got == "rs2 1 0" ]] || return 1
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
  for n in d1 d2; do ! node_running $n tandemd || node_kill $n tandemd TERM; done
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

# ---------------------------------------------------------------------------------------------
# Sessions through a failure of d1 and its return: the phases of test/vm/tests/sync_sessions
# (tandem, judged) and test/vm/bench/sync_sessions_keepalived (tandem beside keepalived,
# reported). Set SESSIONS (per service), STICKY (persistent clients per cut phase) and:
#   phase_strict=1   every session must answer a line sent after the takeover, and one sent
#                    after the return, each within a bound derived from the timers (else a
#                    problem: phase_problems); 0: each session answers or ends (reset), and a
#                    late one is only reported (the control without sync; the benchmark)
#   phase_bounds=timers  the takeover, the return and the sync to d2 within the timers that bound
#                    them (tandem's, the kernel's) + lab.sh's settle margin (lab_within), the
#                    timers named in the failure (the test); steps: only a step that does not
#                    happen at all fails, with lab.sh's deadlines (the benchmark: it never fails
#                    on a number)
#
#   phase_run NAME cut|kill
#     1. cut: STICKY persistent clients (sticky_round) connect once, before the sessions load
#        the VM (each client's process start then costs a second, not ten);
#     2. SESSIONS sessions over NAT (:7000, client NAME) and as many over DR (:7100, NAME-dr),
#        a line every pair_interval_ms each, every echo checked (session_probe run, until the
#        phase's SIGTERM: no clock of the client's can end a phase); every one has answered
#        through d1; with sync (NAME not "unsynced") d2's table holds every session (and the
#        templates), and under tandem with phase_strict d2's `tandem sync status` heard d1's
#        master (heard_from_d1);
#     3. cut: both of d1's links down; kill: kill -9 of d1's stack. d2 takes over (a sync master
#        on d2 with sync); cut: the persistent clients again, in the reverse order;
#     4. a mark (SIGUSR1): every session answers a line sent from then on (phase_strict), or
#        answers or ends: the scenario runs through d2 until the sessions say so, not for a time;
#     5. cut: the links back (d1 must announce the VIPs again under tandem); kill: d1's stack
#        started again; d1 takes the service back; a mark, and the same wait through d1;
#     6. SIGTERM: the clients stop sending, give the last echoes their drain (15 s: one that
#        lost segments waits out TCP's doubled retransmission timeout; a lost one never
#        answers) and report; key=value into out[NAME.KEY] and out[NAME-dr.KEY].
declare -A out sticky
phase_strict=0 phase_bounds=steps phase_problems=()
sticky_retries=""
# The kernel's timers (tandem's are pair_hb_ms, pair_dead_ms and pair_sync_settle_ms above).
pair_sync_ms=3300    # IPVS sync: sent at a connection's 3rd packet (300 ms of lines), in a buffer
                     # that leaves within 2 s, checked every 1 s
pair_rto_ms=1000     # TCP's first retransmission timeout: 200 ms at least (TCP_RTO_MIN)
pair_connect_ms=10000 pair_drain_ms=15000  # session_probe: each connect, the end's drain
# A line every 200 ms per session: 100 sessions over NAT and 100 over DR at 100 ms saturated the
# emulated directors on a loaded host (a persistent client's socat took 10-30 s, dead_time's 1 s
# takeover 10-14 s); at 200 ms the master still resends each connection every 50 of its
# packets, within 5 s, which heard_from_d1's 15 s allows three times over.
pair_interval_ms=200
sticky_base() {
  case $1 in
    unsynced) echo 200 ;;
    ka-*) echo 220 ;;
    *) echo 210 ;;
  esac
}
synced_on_d2() { (($(d2_entries 7000) >= SESSIONS && $(d2_entries 7100) >= SESSIONS)); }
# sticky_round PHASE WHEN ORDER...: one short session from each client address of the phase
# (198.51.100.(base+I)) to the persistent service, in the order given; the real server that
# echoed into sticky[PHASE.WHEN.I]. One process in the client runs them all (a process start
# costs seconds in a loaded VM): for each address one line over one connection (socat, bound to
# it; at most a 10 s connect and 10 s without data), and the real server's name in the echo.
# A connect gets 10 s: under a slow TCG VM right
# after a takeover it can take seconds. A client whose connect failed saw no real server (and
# left no template): it tries again, up to 3 times; the round it needed is kept for the table.
sticky_round() {
  local phase=$1 when=$2 base i try name rounds
  base=$(sticky_base "$1")
  shift 2
  # shellcheck disable=SC2016  # the script runs in the client, with its own arguments
  rounds=$(node_exec client bash -c '
    base=$1
    shift
    for i in "$@"; do
      for try in 1 2 3; do
        line=$(echo "1 $i" | socat -t 10 -T 10 - \
          "TCP:198.51.100.50:7001,bind=198.51.100.$((base + i)),connect-timeout=10" 2>/dev/null)
        name=${line%% *}
        [[ -n $name ]] && break
      done
      echo "$i $try ${name:--}"
    done' sticky "$base" "$@")
  while read -r i try name; do
    [[ -n $i ]] || continue
    [[ $name == - ]] && name=""
    if ((try > 1)); then
      sticky_retries+="$phase/$when/.$((base + i)):$try "
      phase_say "$phase" "persistent client .$((base + i)) ($when) needed $try tries: ${name:-no answer}"
    fi
    sticky[$phase.$when.$i]=$name
  done <<<"$rounds"
}
# sticky_moved PHASE: how many clients' real server differs after the takeover from before
sticky_moved() {
  local i n=0
  for ((i = 1; i <= STICKY; i++)); do
    [[ ${sticky[$1.before.$i]:-x} != "${sticky[$1.after.$i]:-y}" ]] && n=$((n + 1))
  done
  echo $n
}
sticky_add_addresses() {  # the client's addresses for every phase's persistent clients
  local i base
  for ((i = 1; i <= STICKY; i++)); do
    for base in 200 210 220; do node_exec client ip addr add 198.51.100.$((base + i))/24 dev eth0; done
  done
}
d2_templates() {  # d2_templates PHASE: the phase's templates (client port 0) in d2's table
  local tens=$(($(sticky_base "$1") / 10))
  node_exec d2 ipvsadm -Lnc | grep -cE "^TCP +[0-9:]+ +[A-Z_]+ +198\.51\.100\.${tens}[1-8]:0 +198\.51\.100\.50:7001 "
}
templates_on_d2() { (($(d2_templates "$1") >= STICKY)); }
# What d2's backup daemon heard, by tandemd's listener beside it (tandem sync status --json):
# "messages connection_updates age_ms from", age -1 when nothing was heard.
d2_heard() {
  node_exec d2 "$tandem" sync status --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
h = d["heard"]
age = d["now_ms"] - h["last_ms"] if h["last_ms"] is not None else -1
print(h["messages"], h["connections"], age, h["from"] or "-")' 2>/dev/null
}
d1_announcements() { grep -c "announced vip=203.0.113.1 .*burst=first" "$LAB_DIR/d1/tandemd.log"; }
d1_announced_since() { (($(d1_announcements) > $1)); }
d1_starts() { grep -c "notice: started file=" "$LAB_DIR/d1/tandemd.log"; }
d1_started_since() { (($(d1_starts) > $1)); }

# What d2's backup daemon heard by tandemd's listener (tandem sync status) before NAME's cut.
# "Lately" is 15 s: the master sends a connection again every 50 of its packets, and the
# sessions, opened within a second and sending in step, reach their 50th together, so the
# updates come in bursts; under TCG a burst every 5-10 s (seen: 7.6 and 10.4 s between them).
heard_from_d1() {
  local name=$1 heard_msgs heard_conns heard_age heard_from seen
  read -r heard_msgs heard_conns heard_age heard_from <<<"$(d2_heard)"
  out[$name.heard]="${heard_msgs:-?} messages, ${heard_conns:-?} connection updates, the last ${heard_age:-?} ms before, from ${heard_from:-?}"
  ((${heard_msgs:-0} > 0 && ${heard_conns:-0} >= 2 * SESSIONS && ${heard_age:--1} >= 0 &&
    ${heard_age:-99999} < 15000)) || fail "$name: d2's tandem sync status heard ${out[$name.heard]}"
  # Read whole first: grep -q may exit before ip has written, and pipefail would see SIGPIPE.
  [[ $(node_exec d1 ip -o addr show dev eth1) == *" ${heard_from:-none}/"* ]] ||
    fail "$name: d2 heard the sync messages from ${heard_from:-?}, not from d1's eth1"
  # d1 sees the same through d2's heartbeats: how long ago d2's backup heard, and its templates.
  seen=$(node_exec d1 "$tandem" sync status --json 2>/dev/null | python3 -c '
import json, sys
n = [n for n in json.load(sys.stdin)["nodes"] if n["name"] == "d2"][0]
h = n.get("sync_heard_ms")
print(-1 if h is None else h, n.get("templates", "?"))' 2>/dev/null)
  out[$name.heard_by_d1]="d2 heard ${seen%% *} ms before, ${seen#* } templates"
  ((${seen%% *} >= 0 && ${seen%% *} < 15000)) ||
    fail "$name: d1's tandem sync status, from d2's heartbeats: ${seen:-nothing}"
}

# phase_answered NAME MARKS strict|settled: both of NAME's clients have had MARKS marks and
# every session answered a line since the last (strict), or answered or ended (settled); from
# session_probe's --progress line, read without a process.
phase_answered() {
  local c line
  for c in "$1" "$1-dr"; do
    line=$(<"$LAB_DIR/$c.progress") || return 1
    [[ $line =~ ^marks=([0-9]+)\ mark_ms=[0-9]+\ open=([0-9]+)\ answered=([0-9]+)\ ended=([0-9]+)$ ]] ||
      return 1
    ((BASH_REMATCH[1] == $2)) || return 1
    if [[ $3 == strict ]]; then
      ((BASH_REMATCH[3] == SESSIONS)) || return 1
    else
      ((BASH_REMATCH[3] + BASH_REMATCH[4] == SESSIONS)) || return 1
    fi
  done
}
phase_progress() { echo "NAT $(<"$LAB_DIR/$1.progress") / DR $(<"$LAB_DIR/$1-dr.progress")"; }
# phase_step STEPS_S TIMER=MS... -- CMD...: waits for CMD, under phase_bounds=timers within the
# timers plus the settle margin (lab_within), else within lab.sh's STEPS_S (stretched in the VM);
# 1 when it did not happen, with phase_late saying within what.
phase_late=""
phase_step() {
  local steps_s=$1 terms=()
  shift
  while (($#)) && [[ $1 != -- ]]; do terms+=("$1"); shift; done
  shift
  if [[ $phase_bounds == timers ]]; then
    lab_within "${terms[@]}" -- "$@"
    local rc=$?
    phase_late=" $LAB_WITHIN"
    return $rc
  fi
  phase_late=" within $steps_s s (lab.sh's deadline)"
  wait_until "$steps_s" "$@" >/dev/null
}
# phase_through NAME WHERE SINCE_MS MARKS KEY: after a mark, every session answers a line sent
# from then on (or, not strict, answers or ends) within the time since the failure began
# (SINCE_MS: TCP's retransmission timeout doubles from a segment's first loss, so a session
# retransmits within that much again after the path is back, and the path is back by the mark)
# plus a first timeout and the settle margin. Sets out[NAME.KEY] to the ms it took.
phase_through() {
  local name=$1 where=$2 since=$3 marks=$4 key=$5 mode=settled t
  ((phase_strict)) && mode=strict
  node_kill client "$name" USR1
  node_kill client "$name-dr" USR1
  t=$(lab_now_ms)
  if lab_within "the time since the failure began=$((t - since))" \
    "TCP's first retransmission timeout=$pair_rto_ms" -- phase_answered "$name" "$marks" "$mode"; then
    out[$name.$key]=$(($(lab_now_ms) - t))
  else
    out[$name.$key]=late
    local what=answered why
    [[ $mode == strict ]] || what="answered or ended"
    why="$name: not every session $what $where $LAB_WITHIN (TCP's retransmission timeout doubles from a segment's first loss): $(phase_progress "$name")"
    if ((phase_strict)); then phase_problems+=("$why"); else echo "note: $why"; fi
  fi
}

# phase_say NAME WHAT: a step of the phase, stamped (the CI log shows where the time goes).
phase_say() { printf '[%(%T)T] %s: %s\n' -1 "$1" "$2"; }

phase_run() {
  local name=$1 how=$2 t0 announced_before=0 c port log
  phase_say "$name" "start ($how, $SESSIONS sessions per service, $stack)"
  wait_until 30 served >/dev/null ||
    fail "$name: the services (NAT :7000, DR :7100) do not answer through the VIP"
  [[ $how == cut ]] && sticky_round "$name" before $(seq 1 "$STICKY")
  for c in "$name" "$name-dr"; do
    port=7000
    [[ $c == *-dr ]] && port=7100
    # Until the phase's SIGTERM (--duration-s 0). A connect gets 10 s: the VM's hundreds of
    # connects at once can take seconds, and a connect is not judged.
    node_spawn client "$c" "$probe" run --target 198.51.100.50:$port --sessions "$SESSIONS" \
      --interval-ms $pair_interval_ms --duration-s 0 --connect-timeout-ms $pair_connect_ms \
      --drain-ms $pair_drain_ms --report "$LAB_DIR/$c-sessions.txt" \
      --progress "$LAB_DIR/$c.progress" >/dev/null
  done
  for c in "$name" "$name-dr"; do
    log=$LAB_DIR/client/$c.log
    wait_until 30 grep -q "sessions connected" "$log" || fail "$c: the sessions did not open"
    grep -q "session_probe: $SESSIONS/$SESSIONS sessions connected" "$log" ||
      fail "$c: not every session connected: $(tail -5 "$log")"
  done
  # Lines flow through d1: every session has had an echo (before a mark, any echo counts).
  wait_until 10 phase_answered "$name" 0 strict >/dev/null ||
    fail "$name: not every session answered through d1: $(phase_progress "$name")"
  phase_say "$name" "every session open and answering through d1"
  if [[ $name != unsynced ]]; then
    # The cut comes once d2's backup daemon holds every session (ipvsadm, the kernel's view).
    phase_step 30 "IPVS sync at a connection's 3rd packet, its buffer sent within 2 s and checked every 1 s=$pair_sync_ms" \
      -- synced_on_d2 ||
      fail "$name: d2's table holds $(d2_entries 7000) NAT and $(d2_entries 7100) DR of the $SESSIONS sessions each, not all$phase_late"
    out[$name.d2_entries]=$(d2_entries 7000)
    out[$name-dr.d2_entries]=$(d2_entries 7100)
    phase_say "$name" "d2's table holds the sessions"
    if [[ $how == cut ]]; then
      phase_step 30 "IPVS sync, as for the sessions=$pair_sync_ms" -- templates_on_d2 "$name" ||
        fail "$name: d2's table holds $(d2_templates "$name") of the $STICKY persistence templates$phase_late;" \
          "d1: $(node_exec d1 ipvsadm -Lnc | grep ':7001' | tr '\n' ';') d2: $(node_exec d2 ipvsadm -Lnc | grep ':7001' | tr '\n' ';')"
    fi
    [[ $how == cut ]] && phase_say "$name" "d2's table holds the templates"
    # tandemd's listener heard d1's master: at least one update per session, lately, from d1
    # (judged: the test's; the benchmark does not judge).
    [[ $stack == tandem ]] && ((phase_strict)) && heard_from_d1 "$name"
    phase_say "$name" "d2's backup heard d1's master"
  fi
  out[$name.states]="cut: d1 $(table_states d1 7000)"
  t0=$(lab_now_ms)
  if [[ $how == cut ]]; then
    cables d1 down
  else
    kill_active_d1
  fi
  # d1 is gone by now (the bound counts from here): its last heartbeat came before.
  phase_step 15 dead_time="$pair_dead_ms" "a heartbeat_interval before the failure=$pair_hb_ms" -- d2_active ||
    fail "$name: d2 did not take over$phase_late"
  out[$name.takeover_ms]=$(($(lab_now_ms) - t0))
  phase_say "$name" "d2 ACTIVE ${out[$name.takeover_ms]} ms after the $how"
  [[ $name != unsynced ]] && {
    [[ $(node_exec d2 ipvsadm -L --daemon) == *"master sync daemon"* ]] ||
      fail "$name: no sync master on d2 after the takeover: $(node_exec d2 ipvsadm -L --daemon)"
    [[ $stack == tandem ]] && out[$name.d2_connections]=$(node_exec d2 "$tandem" status --json 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["sync"]["connections"])' 2>/dev/null)
  }
  [[ $how == cut ]] && sticky_round "$name" after $(seq "$STICKY" -1 1) &&
    phase_say "$name" "the persistent clients answered through d2"
  # The sessions through d2, until each has answered (or ended): a condition, not a time.
  phase_through "$name" "after the takeover" "$t0" 1 d2_answered_ms
  phase_say "$name" "through d2: ${out[$name.d2_answered_ms]} ms after the mark"
  out[$name.states]+="; return: d1 $(table_states d1 7000)d2 $(table_states d2 7000)"
  t0=$(lab_now_ms)
  out[$name.return_at]=$t0
  if [[ $how == cut ]]; then
    [[ $stack == tandem ]] && announced_before=$(d1_announcements)
    cables d1 up
    # Both ACTIVE hear each other's next heartbeat over the healed links; d1 (priority 200) is
    # kept, d2 releases.
    phase_step 60 heartbeat_interval="$pair_hb_ms" dead_time="$pair_dead_ms" -- d1_active ||
      fail "$name: d1 did not take the service back$phase_late"
  else
    local starts_before=0
    [[ $stack == tandem ]] && starts_before=$(d1_starts)
    restart_d1
    if [[ $stack == tandem && $phase_bounds == timers ]]; then
      # The restart's processes first (not timers): tandemd's start and corosync's membership
      # (the restarted d1 is FAULT until it is quorate). Then d1 leaves INIT within dead_time,
      # runs its backup daemon for sync_settle, and takes the service back (failback auto).
      wait_until 30 d1_started_since "$starts_before" >/dev/null || fail "$name: tandemd on d1 did not start again"
      wait_until 30 corosync_sees_count d1 2 >/dev/null || fail "$name: corosync on d1 did not join d2 again"
      phase_step 60 "dead_time in INIT=$pair_dead_ms" sync_settle="$pair_sync_settle_ms" \
        "2 x heartbeat_interval=$((2 * pair_hb_ms))" -- d1_active ||
        fail "$name: d1 did not take the service back$phase_late of its start and quorum"
    else
      wait_until 60 d1_active >/dev/null || fail "$name: d1 did not take the service back"
    fi
  fi
  out[$name.failback_ms]=$(($(lab_now_ms) - t0))
  phase_say "$name" "d1 ACTIVE again ${out[$name.failback_ms]} ms after the return"
  out[$name.states]+="; back: d1 $(table_states d1 7000)"
  # d2 announced the VIPs during the cut, so the real servers' caches hold its MAC for the
  # gateway: d1 must announce again when the split brain heals, whichever side hears first.
  [[ $how == cut && $stack == tandem ]] && {
    phase_step 10 heartbeat_interval="$pair_hb_ms" dead_time="$pair_dead_ms" -- d1_announced_since "$announced_before" ||
      fail "$name: d1 did not announce the VIPs again after the heal$phase_late"
  }
  phase_through "$name" "after d1 took the service back" "$t0" 2 d1_answered_ms
  phase_say "$name" "through d1: ${out[$name.d1_answered_ms]} ms after the mark"
  phase_finish "$name"
}

# phase_finish NAME: the clients stop (SIGTERM), drain and report; their summaries into out[],
# their reports beside $report (the caller's table).
phase_finish() {
  local name=$1 c line dir
  dir=$(dirname "${report:?the caller sets report= to its table}")
  node_exec d1 ipvsadm -Lnc >"$dir/sync_sessions_$name-d1-conns.txt" 2>&1
  out[$name.states]+="; end: d1 $(table_states d1 7000)"
  echo "$name: NAT connections by IPVS state: ${out[$name.states]}"
  for c in "$name" "$name-dr"; do node_kill client "$c" TERM; done
  for c in "$name" "$name-dr"; do
    # It sends nothing more and waits up to its drain for the last echoes, then reports.
    lab_within "its drain=$pair_drain_ms" -- _lab_not node_running client "$c" ||
      fail "$c: the client did not stop $LAB_WITHIN of SIGTERM"
    while IFS= read -r line; do
      [[ $line =~ ^([a-z_0-9]+)=(.*)$ ]] && out[$c.${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    done <"$LAB_DIR/client/$c.log"
    [[ -n ${out[$c.sessions]:-} ]] || fail "$c: the client reported nothing: $(tail -3 "$LAB_DIR/client/$c.log")"
    cp "$LAB_DIR/$c-sessions.txt" "$dir/sync_sessions_$c.txt" 2>/dev/null
    local k
    for k in takeover_ms failback_ms d2_answered_ms d1_answered_ms; do out[$c.$k]=${out[$name.$k]:-?}; done
  done
}

# phase_table PHASE...: the rows, one per phase (and its -dr twin when named).
phase_table() {
  local p what
  printf '%-16s %-22s %8s %6s %6s %6s %6s %6s %8s %9s %9s %9s %9s %9s %9s\n' run "failure, return" sessions alive reset \
    silent lost moved bad_echo "takeover" "on d2" "failback" "on d1" "max stall" "p99 stall"
  for p in "$@"; do
    case $p in
      ka-killed*) what="kill -9, preempt" ;;
      *killed*) what="kill -9, auto failback" ;;
      *) what="link cut, healed" ;;
    esac
    printf '%-16s %-22s %8s %6s %6s %6s %6s %6s %8s %9s %9s %9s %9s %9s %9s\n' "$p" "$what" "${out[$p.sessions]:-?}" \
      "${out[$p.alive_at_end]:-?}" "${out[$p.reset]:-?}" "${out[$p.silent]:-?}" "${out[$p.lost]:-?}" "${out[$p.moved]:-?}" \
      "${out[$p.bad_echo]:-?}" "${out[$p.takeover_ms]:-?}" "${out[$p.d2_answered_ms]:-?}" "${out[$p.failback_ms]:-?}" \
      "${out[$p.d1_answered_ms]:-?}" "${out[$p.max_stall_ms]:-?}" "${out[$p.p99_stall_ms]:-?}"
  done
  echo "(ms; takeover: from the failure to d2 ACTIVE; failback: from the links' return, or d1's restart, to d1 ACTIVE;"
  echo " on d2 / on d1: from the mark after the takeover / the failback until every session had answered a line sent"
  echo " after it (or, without sync, answered or ended))"
}
