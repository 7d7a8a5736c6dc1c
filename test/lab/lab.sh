#!/usr/bin/env bash
# tandem namespace lab: directors, a client and real servers, each in its own network, mount and
# UTS namespace, wired to bridges that live in a dedicated "switch" network namespace.
#
# Source it from a test:            . test/lab/lab.sh; lab_check_tools || skip; lab_trap; lab_up 2
# or drive it from a shell:         test/lab/lab.sh up 2     (prints LAB_DIR=...)
#                                   test/lab/lab.sh exec DIR d1 corosync-quorumtool -s
#                                   test/lab/lab.sh down DIR
#
# Every function reads its state from $LAB_DIR, so a lab can be driven from several shells.
# README.md beside this file lists the API, the topology and the measured numbers.
#
# Rules this file keeps: it touches only namespaces, processes and directories it created and
# recorded under $LAB_DIR; processes are stopped by PID (checked against their start time, so a
# reused PID is never hit), never by name; nothing is ever bridged to the host's uplink; lab
# addresses are 198.51.100.0/24, 203.0.113.0/24 and 2001:db8::/32 only.

# ---------------------------------------------------------------------------------------------
# Settings (environment). lab_up's options override them.
: "${LAB_TOKEN:=1000}"            # totem.token in ms
: "${LAB_CONSENSUS:=}"            # totem.consensus in ms; empty = corosync's default (1.2 x token)
: "${LAB_TOKEN_COEFFICIENT:=}"    # totem.token_coefficient; empty = default (650 ms per node > 2)
: "${LAB_LINKS:=1}"               # corosync knet links: 1 (eth0) or 2 (eth0 + eth2)
: "${LAB_LINK_MODE:=passive}"     # totem.link_mode with 2 links: passive or active
: "${LAB_TOTEM_EXTRA:=}"          # extra lines for the totem section
: "${LAB_POLL_INTERVAL:=0.02}"    # wait_until's polling interval in seconds
: "${LAB_STOP_TIMEOUT:=10}"       # seconds a SIGTERM'd process gets before SIGKILL
: "${LAB_ROOT:=${TMPDIR:-/tmp}}"  # where lab state directories are created
: "${LAB_SHM_SIZE:=256m}"         # size of each node's private /dev/shm
: "${LAB_DOWN_KILL=corosync}"     # node_spawn names that lab_down SIGKILLs instead of SIGTERM
: "${LAB_KEEP:=0}"                # 1: lab_down keeps $LAB_DIR (logs) and prints where it is
LAB_DIR=${LAB_DIR:-}

# ---------------------------------------------------------------------------------------------
# Small utilities

lab_log() { printf '[lab %s] %s\n' "$(date +%T.%3N)" "$*" >&2; }
lab_die() { printf '[lab] ERROR: %s\n' "$*" >&2; return 1; }

# lab_now_ms: wall clock in milliseconds (bash's EPOCHREALTIME, no process spawned)
lab_now_ms() {
  local t=${EPOCHREALTIME/[.,]/}
  echo $((t / 1000))
}

# lab_probe_gap FILE T0 NODE [END]: over test/bench/vip_probe's FILE ("START END ok NAME" or
# "START END fail REASON" a line), "GAP_MS FAILED" from T0 until the first answer from NODE
# started at or after T0 or, with END, over the whole window [T0, END) (NODE is then not read).
# GAP_MS is the longest outage the client saw: from the last answered probe before a run of
# unanswered ones to the next answered one (0 when every probe was answered); FAILED counts the
# unanswered probes. The probe writes a line when an attempt ends: sorted by start time first.
lab_probe_gap() {
  awk -v t0="$2" -v n="$3" -v end="${4:-0}" '
    $3 == "ok" && $1 < t0 { prev = $1; down = 0 }
    $3 == "fail" && $1 < t0 { down = 1 }
    $1 >= t0 && !done {
      if (end > 0 && $1 >= end) { done = 1; next }
      if ($3 == "ok") {
        if (prev == "") prev = t0
        if (down && $1 - prev > g) g = $1 - prev
        prev = $1
        down = 0
        if (end == 0 && $4 == n) done = 1
      } else if ($3 == "fail") { failed++; down = 1 }
    }
    END {
      # a window that ends while the service is still down: the outage lasts to its end
      if (end > 0 && down && prev != "" && end - prev > g) g = end - prev
      printf "%d %d\n", g, failed + 0
    }' <(sort -n -k1,1 "$1")
}

# wait_until TIMEOUT_SECONDS CMD...: runs CMD every $LAB_POLL_INTERVAL until it succeeds.
# Returns 0 as soon as it does, 1 after the deadline. CMD's output is discarded.
# _lab_deadline_us SECONDS: now + SECONDS (e.g. 1.5) in microseconds, in REPLY
_lab_deadline_us() {
  local sec frac
  sec=${1%%.*}
  frac=000000
  [[ $1 == *.* ]] && frac=${1#*.}000000
  REPLY=$(( ${EPOCHREALTIME/[.,]/} + 10#${sec:-0} * 1000000 + 10#${frac:0:6} ))
}

wait_until() {
  local timeout=$1 deadline now
  shift
  _lab_deadline_us "$timeout"
  deadline=$REPLY
  while :; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    now=${EPOCHREALTIME/[.,]/}
    if ((now >= deadline)); then
      printf '[lab] wait_until: timed out after %ss: %s\n' "$timeout" "$*" >&2
      return 1
    fi
    sleep "$LAB_POLL_INTERVAL"
  done
}

# lab_hold SECONDS CMD...: CMD must succeed at every poll (every $LAB_POLL_INTERVAL) for
# SECONDS: the window in which something must never happen (a takeover, a role change). Returns
# 1 at the first poll where it fails, 0 when the window ends. LAB_HOLD_SAMPLES: the polls made.
lab_hold() {
  local deadline
  _lab_deadline_us "$1"
  deadline=$REPLY
  shift
  LAB_HOLD_SAMPLES=0
  while ((${EPOCHREALTIME/[.,]/} < deadline)); do
    "$@" || return 1
    LAB_HOLD_SAMPLES=$((LAB_HOLD_SAMPLES + 1))
    sleep "$LAB_POLL_INTERVAL"
  done
}

# ---------------------------------------------------------------------------------------------
# Durations. A test asserts a duration only as a bound derived from the timers it configured
# (dead_time, heartbeat_interval, a check's interval, corosync's token...) plus a margin for a
# loaded machine, and the message names those timers (STYLE.md, "Tests and benchmarks"). A lower
# bound needs no margin: load only makes things later. Two measured numbers are never compared.
#
# LAB_LOAD_MARGIN_MS: what a loaded 2-core machine (two busy loops beside the test) may add to a
# duration stamped by the daemons themselves. LAB_SETTLE_MARGIN_MS: what a settle wait adds to
# its timers; its polls spawn processes, each 0.2-2.5 s under load (LAB-NOTES). In a TCG guest
# every process start is 5-10 times slower (test/vm/lib.sh scales wait_until itself).
if [[ ${TANDEM_VM_GUEST:-0} == 1 ]]; then
  : "${LAB_LOAD_MARGIN_MS:=$((1500 * ${TANDEM_VM_DEADLINE_SCALE:-5}))}"
else
  : "${LAB_LOAD_MARGIN_MS:=1500}"
fi
: "${LAB_SETTLE_MARGIN_MS:=8000}"

# lab_ms_text MS: REPLY = "2,310 ms"
lab_ms_text() {
  local n=${1#-} s=
  while ((${#n} > 3)); do s=,${n: -3}$s; n=${n:0:${#n}-3}; done
  [[ $1 == -* ]] && n=-$n
  REPLY="$n$s ms"
}
# _lab_terms NAME=MS...: REPLY_MS = their sum, REPLY_TEXT = "dead_time 1,000 ms + token 1,000 ms"
_lab_terms() {
  local t sum=0 text=
  for t in "$@"; do
    lab_ms_text "${t##*=}"
    text+="${text:+ + }${t%=*} $REPLY"
    sum=$((sum + ${t##*=}))
  done
  REPLY_MS=$sum REPLY_TEXT=$text
}
# lab_bound WHAT MS TIMER=MS...: 0 when MS <= the timers' sum + LAB_LOAD_MARGIN_MS. LAB_BOUND
# says it either way, e.g. "takeover 2,310 ms > dead_time 1,000 ms + token 1,000 ms + 1,500 ms
# load margin"; a TIMER's name may be any text ("timeout x fall=1500"). An MS that is not a
# number (no measurement) fails, and LAB_BOUND says so.
lab_bound() {
  local what=$1 ms=$2 limit
  shift 2
  _lab_terms "$@"
  limit=$((REPLY_MS + LAB_LOAD_MARGIN_MS))
  lab_ms_text "$LAB_LOAD_MARGIN_MS"
  REPLY_TEXT+="${REPLY_TEXT:+ + }$REPLY load margin"
  if ! [[ $ms =~ ^-?[0-9]+$ ]]; then
    LAB_BOUND="$what: none measured (bound: $REPLY_TEXT)"
    return 1
  fi
  lab_ms_text "$ms"
  if ((ms <= limit)); then
    LAB_BOUND="$what $REPLY <= $REPLY_TEXT"
    return 0
  fi
  LAB_BOUND="$what $REPLY > $REPLY_TEXT"
  return 1
}
# lab_at_least WHAT MS TIMER=MS...: 0 when MS >= the timers' sum (a lower bound: no margin).
# LAB_BOUND: "failback 2,950 ms < failback_delay 3,000 ms" or ">=".
lab_at_least() {
  local what=$1 ms=$2
  shift 2
  _lab_terms "$@"
  if ! [[ $ms =~ ^-?[0-9]+$ ]]; then
    LAB_BOUND="$what: none measured (lower bound: $REPLY_TEXT)"
    return 1
  fi
  lab_ms_text "$ms"
  if ((ms >= REPLY_MS)); then
    LAB_BOUND="$what $REPLY >= $REPLY_TEXT"
    return 0
  fi
  LAB_BOUND="$what $REPLY < $REPLY_TEXT"
  return 1
}
# lab_below WHAT MS TIMER=MS...: 0 when MS < the timers' sum, without a margin: for a timer that
# a fault would make the duration reach (a takeover that waited for a hook killed at
# notify.timeout takes at least notify.timeout). LAB_BOUND: "... 2,310 ms >= notify.timeout
# 2,000 ms" or "<".
lab_below() {
  local what=$1 ms=$2
  shift 2
  _lab_terms "$@"
  if ! [[ $ms =~ ^-?[0-9]+$ ]]; then
    LAB_BOUND="$what: none measured (bound: under $REPLY_TEXT)"
    return 1
  fi
  lab_ms_text "$ms"
  if ((ms < REPLY_MS)); then
    LAB_BOUND="$what $REPLY < $REPLY_TEXT"
    return 0
  fi
  LAB_BOUND="$what $REPLY >= $REPLY_TEXT"
  return 1
}
# lab_within TIMER=MS... -- CMD...: wait_until CMD with a deadline derived from the timers that
# bound the awaited event, plus LAB_SETTLE_MARGIN_MS. LAB_WITHIN names it for the caller's FAIL
# line: "within 9.2 s (dead_time 1,000 ms + heartbeat_interval 200 ms + 8,000 ms settle margin)".
lab_within() {
  local terms=() ms
  while (($#)) && [[ $1 != -- ]]; do terms+=("$1"); shift; done
  shift
  _lab_terms "${terms[@]}"
  ms=$((REPLY_MS + LAB_SETTLE_MARGIN_MS))
  lab_ms_text "$LAB_SETTLE_MARGIN_MS"
  printf -v LAB_WITHIN 'within %d.%d s (%s%s settle margin)' $((ms / 1000)) $((ms % 1000 / 100)) \
    "${REPLY_TEXT:+$REPLY_TEXT + }" "$REPLY"
  wait_until "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))" "$@"
}

# lab_check_tools: returns 0 when this machine can run the lab; otherwise prints the reason on
# stdout (for "SKIPPED: <reason>") and returns 1.
lab_check_tools() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "needs root (network and mount namespaces)"
    return 1
  fi
  local t missing=()
  for t in ip nsenter unshare mount corosync corosync-cmapctl corosync-quorumtool nft sleep; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t")
  done
  if ((${#missing[@]})); then
    echo "missing tools: ${missing[*]} (Debian: apt-get install -y iproute2 util-linux corosync nftables)"
    return 1
  fi
  if ! ip netns add "tdmprobe$$" 2>/dev/null; then
    echo "cannot create network namespaces"
    return 1
  fi
  ip netns del "tdmprobe$$"
  return 0
}

# Process bookkeeping: a PID file holds "PID STARTTIME" (field 22 of /proc/PID/stat), so that a
# PID that the kernel has reused for something else is never signalled. These helpers fork no
# process: on a loaded 2-core machine every fork counts.
_lab_proc() {  # _lab_proc PID: sets _LAB_ST (start time) and _LAB_STATE; 1 if there is no such PID
  local stat f
  [[ -n $1 ]] || return 1
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  stat=${stat##*) }
  read -r -a f <<<"$stat"
  _LAB_STATE=${f[0]}
  _LAB_ST=${f[19]}
}
# _lab_alive PID STARTTIME: the very process is still running (a zombie counts as dead)
_lab_alive() {
  _lab_proc "$1" || return 1
  [[ $_LAB_ST == "$2" && $_LAB_STATE != Z ]]
}
_lab_record_pid() {  # _lab_record_pid FILE PID
  local st=0
  _lab_proc "$2" && st=$_LAB_ST
  echo "$2 $st" >"$1"
  echo "$2 $st $1" >>"$LAB_DIR/pids.all"
}

# ---------------------------------------------------------------------------------------------
# Topology. Internal helpers answer in REPLY (no subshell); the public ones print.
#
# Directors d1..d3: eth0 on segment "pub", eth1 on "rs", eth2 (with --links 2) on "cl".
_lab_ipv4() {  # _lab_ipv4 NODE IFACE: REPLY=address/prefix; 1 if the interface has no IPv4
  case $1:$2 in
    d[1-3]:eth0) REPLY="198.51.100.1${1#d}/24" ;;
    d[1-3]:eth1) REPLY="203.0.113.1${1#d}/24" ;;
    client:eth0) REPLY="198.51.100.100/24" ;;
    rs[1-2]:eth0) REPLY="203.0.113.2${1#rs}/24" ;;
    *) return 1 ;;
  esac
}
_lab_ipv6() {
  case $1:$2 in
    d[1-3]:eth0) REPLY="2001:db8::1${1#d}/64" ;;
    d[1-3]:eth1) REPLY="2001:db8:1::1${1#d}/64" ;;
    d[1-3]:eth2) REPLY="2001:db8:2::1${1#d}/64" ;;
    client:eth0) REPLY="2001:db8::100/64" ;;
    rs[1-2]:eth0) REPLY="2001:db8:1::2${1#rs}/64" ;;
    *) return 1 ;;
  esac
}
_lab_segment() {  # REPLY=bridge in the switch namespace
  case $1:$2 in
    d*:eth0 | client:eth0) REPLY=pub ;;
    d*:eth1 | rs*:eth0) REPLY=rs ;;
    d*:eth2) REPLY=cl ;;
    *) return 1 ;;
  esac
}
# REPLY=02:74:64:<segment 00 pub, 01 rs, 02 cl>:00:<last IPv4 octet: d1 0b, client 64, rs1 15>
_lab_mac() {
  local seg host
  _lab_segment "$1" "$2" || return 1
  case $REPLY in pub) seg=00 ;; rs) seg=01 ;; cl) seg=02 ;; esac
  case $1 in d[1-3]) host=1${1#d} ;; client) host=100 ;; rs[1-2]) host=2${1#rs} ;; *) return 1 ;; esac
  printf -v REPLY '02:74:64:%s:00:%02x' "$seg" "$host"
}
_lab_ifaces() {  # REPLY=the node's interfaces
  case $1 in
    d*) REPLY="eth0 eth1"; [[ $_LAB_LINKS == 2 ]] && REPLY+=" eth2" ;;
    *) REPLY=eth0 ;;
  esac
  return 0
}

# Lab state in $LAB_DIR/lab.env, read into _LAB_* variables when LAB_DIR changes.
_LAB_LOADED=
_lab_load() {
  [[ -n $LAB_DIR && -f $LAB_DIR/lab.env ]] || { lab_die "no lab is up (LAB_DIR unset or gone)"; return 1; }
  [[ $_LAB_LOADED == "$LAB_DIR" ]] && return 0
  local k v
  while IFS='=' read -r k v; do
    case $k in
      id) _LAB_ID=$v ;; n) _LAB_N=$v ;; directors) _LAB_DIRECTORS=$v ;;
      nodes) _LAB_NODES=$v ;; links) _LAB_LINKS=$v ;;
    esac
  done <"$LAB_DIR/lab.env"
  _LAB_LOADED=$LAB_DIR
}
lab_get() {  # lab_get id|n|directors|nodes|links|owner|created
  local k v
  _lab_load || return 1
  while IFS='=' read -r k v; do [[ $k == "$1" ]] && REPLY=$v; done <"$LAB_DIR/lab.env"
  echo "$REPLY"
}
lab_nodes() { _lab_load && echo "$_LAB_NODES"; }          # all nodes: d1 d2 [d3] client rs1 rs2
lab_directors() { _lab_load && echo "$_LAB_DIRECTORS"; }  # d1 d2 [d3]
lab_netns() { _lab_load && echo "$_LAB_ID-$1"; }          # lab_netns NODE|sw: netns name
# lab_addr NODE [IFACE [4|6]]: the node's address without prefix length (default eth0, IPv4)
lab_addr() {
  if [[ ${3:-4} == 6 ]]; then _lab_ipv6 "$1" "${2:-eth0}"; else _lab_ipv4 "$1" "${2:-eth0}"; fi || return 1
  echo "${REPLY%/*}"
}
lab_mac() { _lab_mac "$1" "${2:-eth0}" && echo "$REPLY"; }  # lab_mac NODE [IFACE]

_lab_sw() { _lab_load && ip netns exec "$_LAB_ID-sw" "$@"; }  # run a command in the switch namespace

# The holder: a long-lived process in the node's network namespace plus its own mount and UTS
# namespaces. Every command run "on" a node joins the holder's namespaces.
# shellcheck disable=SC2016
_LAB_HOLDER='
set -e
node=$1 dir=$2 shm=$3
. "$dir/net-setup.sh"
hostname "$node"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$dir/etc,workdir=$dir/.work/etc" /etc
mount -t overlay overlay -o "lowerdir=/var,upperdir=$dir/var,workdir=$dir/.work/var" /var
# The state_dir of tandemd: empty and the node own, never the host one through the overlay lower
# layer (a director installed on the host, or d1 of the systemd VM, would hand its role over).
mkdir -p /var/lib/tandem
mount -t tmpfs -o mode=0750,size=16m lab-tandem /var/lib/tandem
mount -t tmpfs -o mode=0755,size=64m lab-run /run
mkdir -p /run/lock
mount -t tmpfs -o "mode=1777,size=$shm" lab-shm /dev/shm
# A sysfs of this network namespace, as "ip netns exec" gives; keep the cgroup tree under it.
mkdir /run/.lab-cgroup
mount --rbind /sys/fs/cgroup /run/.lab-cgroup 2>/dev/null || true
mount -t sysfs lab-sys /sys
mount --move /run/.lab-cgroup /sys/fs/cgroup 2>/dev/null || umount -l /run/.lab-cgroup 2>/dev/null || true
rmdir /run/.lab-cgroup 2>/dev/null || true
echo "$$" >"$dir/holder.ready"
exec sleep infinity
'

_lab_holder() { # _lab_holder NODE: REPLY=the holder's PID
  local pid st
  [[ -n $LAB_DIR ]] || { lab_die "no lab is up (LAB_DIR unset)"; return 1; }
  read -r pid st 2>/dev/null <"$LAB_DIR/$1/holder.pid" || { lab_die "no node $1 in this lab"; return 1; }
  _lab_alive "$pid" "$st" || { lab_die "the holder of node $1 (pid $pid) is gone"; return 1; }
  REPLY=$pid
}

_lab_nsenter() { # _lab_nsenter NODE CMD...
  local node=$1 holder wd=/
  shift
  _lab_holder "$node" || return 1
  holder=$REPLY
  case $PWD in /run | /run/* | /dev/shm | /dev/shm/*) ;; *) wd=$PWD ;; esac
  if [[ $- == *i* ]]; then
    nsenter --target "$holder" --net --mount --uts --wd="$wd" -- "$@"
    return
  fi
  # In a script, run it as a child and "wait" for it: bash runs a trap (lab_trap's SIGTERM/
  # SIGINT) only after a foreground command has finished, but interrupts "wait" at once.
  nsenter --target "$holder" --net --mount --uts --wd="$wd" -- "$@" <&0 &
  wait "$!"
}

# lab_up N [--token MS] [--consensus MS] [--links 1|2] [--link-mode passive|active]
lab_up() {
  local n=${1:-2}
  shift || true
  while (($#)); do
    case $1 in
      --token) LAB_TOKEN=$2; shift 2 ;;
      --consensus) LAB_CONSENSUS=$2; shift 2 ;;
      --links) LAB_LINKS=$2; shift 2 ;;
      --link-mode) LAB_LINK_MODE=$2; shift 2 ;;
      *) lab_die "lab_up: unknown option $1"; return 1 ;;
    esac
  done
  [[ $n == 2 || $n == 3 ]] || { lab_die "lab_up: 2 or 3 directors, not $n"; return 1; }
  [[ $LAB_LINKS == 1 || $LAB_LINKS == 2 ]] || { lab_die "lab_up: --links 1 or 2"; return 1; }
  if [[ -n $LAB_DIR && -f $LAB_DIR/lab.env ]]; then
    lab_die "lab_up: a lab is already up in $LAB_DIR; lab_down first"
    return 1
  fi
  case $LAB_ROOT in /run | /run/* | /dev/shm | /dev/shm/*)
    lab_die "LAB_ROOT must not be under /run or /dev/shm (nodes mount their own there)"; return 1 ;;
  esac

  local id="tdm$$"
  [[ -n ${LAB_ID:-} ]] && id=$LAB_ID
  while compgen -G "/run/netns/$id-*" >/dev/null; do
    id="tdm$$x$RANDOM"
  done
  LAB_DIR=$(mktemp -d "$LAB_ROOT/tandem-lab.XXXXXX") || return 1
  export LAB_DIR
  local directors="" d i
  for ((i = 1; i <= n; i++)); do directors+="${directors:+ }d$i"; done
  local nodes="$directors client rs1 rs2"
  local owner_st=0
  _lab_proc $$ && owner_st=$_LAB_ST
  {
    echo "id=$id"
    echo "n=$n"
    echo "directors=$directors"
    echo "nodes=$nodes"
    echo "links=$LAB_LINKS"
    echo "owner=$$ $owner_st"
    echo "created=$(date -Is)"
  } >"$LAB_DIR/lab.env"
  : >"$LAB_DIR/netns"
  : >"$LAB_DIR/pids.all"
  lab_log "lab $id: $n directors, state in $LAB_DIR"
  _lab_load || return 1

  _lab_build "$id" "$nodes" || { lab_die "lab_up failed; tearing down"; lab_down; return 1; }
  lab_log "lab $id is up"
}

_lab_build() {
  local id=$1 nodes=$2 node ifc sw="$1-sw" ns seg m
  # Namespaces first, each recorded before it exists.
  for node in sw $nodes; do
    echo "$id-$node" >>"$LAB_DIR/netns"
    ip netns add "$id-$node" || return 1
  done
  # The switch: bridges only, no addresses, no ARP answers, no IPv6.
  _lab_sw sh -c '
    set -e
    sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    sysctl -qw net.ipv4.conf.all.arp_ignore=8 net.ipv4.conf.default.arp_ignore=8
    ip link set lo up
    for br in pub rs cl; do
      ip link add "$br" type bridge stp_state 0 forward_delay 0 mcast_snooping 0
      sysctl -qw "net.ipv4.conf.$br.arp_ignore=8"
      ip link set "$br" up
    done' || return 1
  if command -v nft >/dev/null 2>&1; then
    # Partitions: drop frames whose (source MAC, destination MAC) pair is in @cut.
    _lab_sw nft -f - <<'EOF2' || return 1
table bridge tandemlab {
  set cut { type ether_addr . ether_addr; }
  set udpcut { type ether_addr . ether_addr . inet_service; }
  chain forward {
    type filter hook forward priority 0; policy accept;
    ether saddr . ether daddr @cut counter drop
    meta l4proto udp ether saddr . ether daddr . udp dport @udpcut counter drop
  }
}
EOF2
  fi
  # Cables: one veth per node interface, "NODE-IFACE" on the switch side, "IFACE" in the node.
  for node in $nodes; do
    _lab_ifaces "$node"
    for ifc in $REPLY; do
      _lab_segment "$node" "$ifc"
      seg=$REPLY
      echo "link add $node-$ifc type veth peer name $ifc netns $id-$node"
      echo "link set $node-$ifc master $seg up"
    done
  done | ip -n "$sw" -batch - || return 1

  for node in $nodes; do
    mkdir -p "$LAB_DIR/$node"/{etc,var,.work/etc,.work/var}
    # The node's own network setup, run by its holder inside the network namespace.
    {
      echo "sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0"
      echo "sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1 net.ipv6.conf.default.keep_addr_on_down=1"
      echo "ip -batch - <<'EOB'"
      echo "link set lo up"
      _lab_ifaces "$node"
      for ifc in $REPLY; do
        _lab_mac "$node" "$ifc" && echo "link set $ifc address $REPLY up"
        _lab_ipv4 "$node" "$ifc" && echo "addr add $REPLY dev $ifc"
        _lab_ipv6 "$node" "$ifc" && echo "addr add $REPLY dev $ifc nodad"
      done
      echo "EOB"
    } >"$LAB_DIR/$node/net-setup.sh"
    # Per-node /etc content (the overlay's upper layer, written before it is mounted).
    echo "$node" >"$LAB_DIR/$node/etc/hostname"
    {
      cat /etc/hosts
      echo "# tandem lab $id"
      for m in $nodes; do
        _lab_ipv4 "$m" eth0 && echo "${REPLY%/*} $m"
        _lab_ipv6 "$m" eth0 && echo "${REPLY%/*} $m"
      done
    } >"$LAB_DIR/$node/etc/hosts"
  done

  # corosync: one authkey for the cluster, one identical corosync.conf per director.
  local key=$LAB_DIR/authkey
  (umask 077 && head -c 256 /dev/urandom >"$key") || return 1
  _lab_corosync_conf >"$LAB_DIR/corosync.conf" || return 1
  for node in $_LAB_DIRECTORS; do
    mkdir -p "$LAB_DIR/$node/etc/corosync"
    install -m 0400 "$key" "$LAB_DIR/$node/etc/corosync/authkey"
    install -m 0644 "$LAB_DIR/corosync.conf" "$LAB_DIR/$node/etc/corosync/corosync.conf"
  done

  # Holders, all started first, then waited for.
  local pid
  for node in $nodes; do
    nsenter --net="/run/netns/$id-$node" -- unshare --mount --uts --propagation private -- \
      sh -c "$_LAB_HOLDER" holder "$node" "$LAB_DIR/$node" "$LAB_SHM_SIZE" \
      </dev/null >"$LAB_DIR/$node/holder.log" 2>&1 &
    pid=$!
    disown "$pid" 2>/dev/null || true
    _lab_record_pid "$LAB_DIR/$node/holder.pid" "$pid"
  done
  for node in $nodes; do
    if ! wait_until 20 _lab_holder_ready "$node"; then
      lab_die "node $node did not come up: $(cat "$LAB_DIR/$node/holder.log")"
      return 1
    fi
  done
}

_lab_holder_ready() {
  local pid st ready comm
  read -r pid st 2>/dev/null <"$LAB_DIR/$1/holder.pid" || return 1
  read -r ready 2>/dev/null <"$LAB_DIR/$1/holder.ready" || return 1
  [[ $ready == "$pid" ]] || return 1
  # The holder has exec'd to sleep (so nothing of its setup is still running).
  read -r comm 2>/dev/null <"/proc/$pid/comm" || return 1
  _lab_alive "$pid" "$st" && [[ $comm == sleep ]]
}

# ---------------------------------------------------------------------------------------------
# Running things on nodes

# node_exec NODE CMD...: run CMD in the foreground inside NODE's net, mount and UTS namespaces.
node_exec() { _lab_nsenter "$@"; }

# node_spawn NODE NAME CMD...: start CMD in the background inside NODE; its PID is recorded under
# NAME, its stdout and stderr go to $LAB_DIR/NODE/NAME.log. Prints the PID.
node_spawn() {
  local node=$1 name=$2 holder pid wd=/
  shift 2
  _lab_holder "$node" || return 1
  holder=$REPLY
  if node_running "$node" "$name"; then
    lab_die "node_spawn: $name is already running on $node (pid $(node_pid "$node" "$name"))"
    return 1
  fi
  case $PWD in /run | /run/* | /dev/shm | /dev/shm/*) ;; *) wd=$PWD ;; esac
  nsenter --target "$holder" --net --mount --uts --wd="$wd" -- "$@" \
    </dev/null >>"$LAB_DIR/$node/$name.log" 2>&1 &
  pid=$!
  disown "$pid" 2>/dev/null || true
  _lab_record_pid "$LAB_DIR/$node/$name.pid" "$pid"
  echo "$pid"
}

# node_pid NODE NAME: the PID recorded under NAME (even if it has exited)
node_pid() {
  local pid st
  read -r pid st 2>/dev/null <"$LAB_DIR/$1/$2.pid" || return 1
  echo "$pid"
}

# node_running NODE NAME: is the process recorded under NAME still running?
node_running() {
  local pid st
  read -r pid st 2>/dev/null <"$LAB_DIR/$1/$2.pid" || return 1
  _lab_alive "$pid" "$st"
}

# node_kill NODE NAME [SIGNAL]: send SIGNAL (default TERM) to the process recorded under NAME.
node_kill() {
  local pid st
  read -r pid st 2>/dev/null <"$LAB_DIR/$1/$2.pid" || { lab_die "node_kill: no $2 on $1"; return 1; }
  _lab_alive "$pid" "$st" || return 0
  kill "-${3:-TERM}" "$pid"
}

# node_stop NODE NAME [TIMEOUT]: SIGTERM, wait until it has exited, SIGKILL after TIMEOUT
# (default $LAB_STOP_TIMEOUT) seconds. Returns 1 if it had to be killed.
node_stop() {
  node_running "$1" "$2" || return 0
  node_kill "$1" "$2" TERM
  if wait_until "${3:-$LAB_STOP_TIMEOUT}" _lab_not node_running "$1" "$2" 2>/dev/null; then
    return 0
  fi
  lab_log "node_stop: $2 on $1 ignored SIGTERM for ${3:-$LAB_STOP_TIMEOUT}s; SIGKILL"
  node_kill "$1" "$2" KILL
  wait_until 5 _lab_not node_running "$1" "$2"
  return 1
}
_lab_not() { ! "$@"; }

# node_put NODE PATH [MODE] < CONTENT: write a file inside the node (e.g. under its /etc)
node_put() {
  node_exec "$1" sh -c 'mkdir -p "$(dirname "$1")" && cat >"$1" && chmod "$2" "$1"' put "$2" "${3:-0644}"
}

# ---------------------------------------------------------------------------------------------
# corosync

_lab_corosync_conf() {
  local d n links
  _lab_load || return 1
  n=$_LAB_N links=$_LAB_LINKS
  cat <<EOF
# Generated by test/lab/lab.sh for lab $_LAB_ID.
totem {
    version: 2
    cluster_name: tandem-lab
    transport: knet
    crypto_cipher: aes256
    crypto_hash: sha256
    keyfile: /etc/corosync/authkey
    token: $LAB_TOKEN
EOF
  [[ -n $LAB_CONSENSUS ]] && echo "    consensus: $LAB_CONSENSUS"
  [[ -n $LAB_TOKEN_COEFFICIENT ]] && echo "    token_coefficient: $LAB_TOKEN_COEFFICIENT"
  [[ $links == 2 ]] && echo "    link_mode: $LAB_LINK_MODE"
  if [[ -n $LAB_TOTEM_EXTRA ]]; then
    while IFS= read -r d; do echo "    $d"; done <<<"$LAB_TOTEM_EXTRA"
  fi
  echo "}"
  echo "nodelist {"
  for d in $_LAB_DIRECTORS; do
    echo "    node {"
    echo "        name: $d"
    echo "        nodeid: ${d#d}"
    echo "        ring0_addr: $(lab_addr "$d" eth0)"
    [[ $links == 2 ]] && echo "        ring1_addr: $(lab_addr "$d" eth2 6)"
    echo "    }"
  done
  echo "}"
  cat <<EOF
quorum {
    provider: corosync_votequorum
EOF
  [[ $n == 2 ]] && echo "    two_node: 1"
  cat <<EOF
}
logging {
    to_logfile: yes
    logfile: /var/log/corosync/corosync.log
    to_stderr: no
    to_syslog: no
    timestamp: hires
    debug: off
}
system {
    move_to_root_cgroup: no
    state_dir: /var/lib/corosync
}
EOF
}

# corosync_conf_rewrite: regenerate corosync.conf from the current LAB_* settings on every
# director (for a restart with other timers).
corosync_conf_rewrite() {
  local d
  _lab_corosync_conf >"$LAB_DIR/corosync.conf" || return 1
  for d in $_LAB_DIRECTORS; do
    node_put "$d" /etc/corosync/corosync.conf 0644 <"$LAB_DIR/corosync.conf" || return 1
  done
}

# corosync_start NODE...: start "corosync -f" on each director (all at once), then wait (10 s
# deadline each) until each answers on its IPC. libqb files that a killed predecessor left in the
# node's /dev/shm are removed first.
corosync_start() {
  local node old st rc=0
  for node in "$@"; do
    if node_running "$node" corosync; then
      lab_die "corosync_start: corosync already runs on $node"
      return 1
    fi
    if read -r old st 2>/dev/null <"$LAB_DIR/$node/corosync.pid"; then
      _lab_qb_cleanup "$node" "$old"
    fi
    echo "=== $(date -Is) corosync_start" >>"$LAB_DIR/$node/corosync.log"
    node_spawn "$node" corosync corosync -f -c /etc/corosync/corosync.conf >/dev/null || return 1
  done
  for node in "$@"; do
    if ! wait_until 10 _lab_corosync_ready "$node"; then
      lab_die "corosync on $node did not start; $(corosync_log_path "$node"):"
      tail -20 "$(corosync_log_path "$node")" >&2 2>/dev/null
      tail -5 "$LAB_DIR/$node/corosync.log" >&2
      rc=1
    fi
  done
  return $rc
}
_lab_corosync_ready() {
  node_running "$1" corosync || return 2
  node_exec "$1" corosync-cmapctl -g runtime.votequorum.this_node_id
}

# Removes what libqb left in the node's /dev/shm when corosync (PID $2) was killed: its blackbox
# (qb-corosync-PID-blackbox-*, 8 MiB) and one directory per IPC connection (qb-PID-CLIENT-*).
_lab_qb_cleanup() {
  node_exec "$1" sh -c 'rm -rf /dev/shm/qb-corosync-"$1"-* /dev/shm/qb-"$1"-*' qb "$2"
}

# corosync_stop NODE [TIMEOUT]: SIGTERM and wait (default deadline $LAB_STOP_TIMEOUT s).
corosync_stop() { node_stop "$1" corosync "${2:-$LAB_STOP_TIMEOUT}"; }
# corosync_kill NODE: SIGKILL, and wait until the process is gone.
corosync_kill() {
  node_kill "$1" corosync KILL || return 1
  wait_until 5 _lab_not node_running "$1" corosync
}
corosync_running() { node_running "$1" corosync; }
corosync_log_path() { echo "$LAB_DIR/$1/var/log/corosync/corosync.log"; }

# corosync_cmap NODE KEY: a cmap value as NODE's corosync sees it
corosync_cmap() {
  local out
  out=$(node_exec "$1" corosync-cmapctl -g "$2" 2>/dev/null) || return 1
  echo "${out##* = }"
}

# corosync_members NODE: node IDs in NODE's current membership, ascending, on one line
# (runtime.members.ID.status = joined; parsed in bash: a poll should cost one process, not four)
corosync_members() {
  local out line ids=()
  out=$(node_exec "$1" corosync-cmapctl -b runtime.members 2>/dev/null) || return 1
  while IFS= read -r line; do
    [[ $line =~ ^runtime\.members\.([0-9]+)\.status\ \(str\)\ =\ joined$ ]] && ids[BASH_REMATCH[1]]=1
  done <<<"$out"
  echo "${!ids[*]}"  # indices of an indexed array come out in ascending order
}
# corosync_sees NODE ID...: NODE's current membership is exactly these node IDs (ascending)
corosync_sees() {
  local node=$1 got
  shift
  got=$(corosync_members "$node") || return 1
  [[ $got == "$*" ]]
}
# corosync_member_count NODE: how many nodes NODE's current membership has
corosync_member_count() {
  local m
  m=$(corosync_members "$1") || return 1
  # shellcheck disable=SC2086
  set -- $m
  echo $#
}
# corosync_sees_count NODE N: NODE's current membership has N nodes
corosync_sees_count() { [[ $(corosync_member_count "$1") == "$2" ]]; }
# corosync_quorate NODE: 0 if NODE's votequorum says quorate
corosync_quorate() {
  local out
  out=$(node_exec "$1" corosync-quorumtool -s 2>/dev/null)
  [[ $out =~ (^|$'\n')Quorate:\ +Yes ]]
}
# corosync_log_time NODE REGEX SINCE_MS: the time (epoch ms) of the first line of NODE's corosync
# log at or after SINCE_MS that matches REGEX (bash ERE). corosync stamps its log lines with
# milliseconds ("timestamp: hires"), so this times an event without the polling delay, e.g.
#   corosync_log_time d1 'Members\[1\]:' "$t0"
corosync_log_time() {
  local f since=$3 secs hms h m s day0 line t
  f=$(corosync_log_path "$1")
  secs=$((since / 1000))
  printf -v hms '%(%H %M %S)T' "$secs"
  read -r h m s <<<"$hms"
  day0=$(((secs - (10#$h * 3600 + 10#$m * 60 + 10#$s)) * 1000))  # local midnight, epoch ms
  while IFS= read -r line; do
    [[ $line =~ ^[A-Z][a-z]{2}\ +[0-9]+\ ([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3}) ]] || continue
    t=$((day0 + ((10#${BASH_REMATCH[1]} * 60 + 10#${BASH_REMATCH[2]}) * 60 + 10#${BASH_REMATCH[3]}) * 1000 + 10#${BASH_REMATCH[4]}))
    ((t < since - 43200000)) && t=$((t + 86400000))  # the log crossed midnight
    ((t >= since)) || continue
    [[ $line =~ $2 ]] || continue
    echo "$t"
    return 0
  done < <(grep -E -- "$2" "$f" 2>/dev/null)
  return 1
}
# corosync_token_ms NODE: the token timeout corosync actually uses (token_coefficient included)
corosync_token_ms() { corosync_cmap "$1" runtime.config.totem.token; }

# ---------------------------------------------------------------------------------------------
# Faults

# link_cut NODE [IFACE]: unplug the cable: the switch-side end of NODE's veth goes down, so NODE
# sees NO-CARRIER on IFACE (default eth0; addresses stay) and no frame passes either way.
link_cut() { _lab_load && ip -n "$_LAB_ID-sw" link set "$1-${2:-eth0}" down; }
# link_restore NODE [IFACE]: plug it back in
link_restore() { _lab_load && ip -n "$_LAB_ID-sw" link set "$1-${2:-eth0}" up; }

# partition A B: silently drop every frame between the nodes of group A and those of group B, in
# both directions, on every segment (bridge-family nftables in the switch namespace; carriers stay
# up). A group is a node or a comma-separated list: partition d1 d2,d3.
partition() { _lab_cut add "$1" "$2" both; }
# partition_oneway A B: drop only frames from A to B
partition_oneway() { _lab_cut add "$1" "$2" oneway; }
# heal [A B]: undo partition A B; without arguments, undo every partition
heal() {
  if (($# == 0)); then
    _lab_sw nft flush set bridge tandemlab cut
  else
    _lab_cut delete "$1" "$2" both
  fi
}
# udp_block A B PORT: drop only the UDP datagrams to PORT between groups A and B, both ways; the
# rest of their traffic still passes. udp_unblock: undo every udp_block.
udp_block() { _lab_cut add "$1" "$2" both "$3"; }
udp_unblock() { _lab_sw nft flush set bridge tandemlab udpcut; }
_lab_cut() {  # _lab_cut add|delete A B both|oneway [UDP_PORT]
  local op=$1 dir=$4 port=${5:+ . $5} set=cut a b ia ib ma mb elems=()
  [[ -n $port ]] && set=udpcut
  command -v nft >/dev/null || { lab_die "partition needs nft (apt-get install nftables)"; return 1; }
  _lab_load || return 1
  for a in ${2//,/ }; do
    for b in ${3//,/ }; do
      _lab_ifaces "$a"
      for ia in $REPLY; do
        _lab_ifaces "$b"
        for ib in $REPLY; do
          _lab_mac "$a" "$ia" || { lab_die "no node $a"; return 1; }
          ma=$REPLY
          _lab_mac "$b" "$ib" || { lab_die "no node $b"; return 1; }
          mb=$REPLY
          elems+=("$ma . $mb$port")
          [[ $dir == both ]] && elems+=("$mb . $ma$port")
        done
      done
    done
  done
  local IFS=,
  if [[ $op == delete ]]; then
    # delete fails on absent elements: remove them one by one and ignore those
    local e
    for e in "${elems[@]}"; do _lab_sw nft delete element bridge tandemlab "$set" "{ $e }" 2>/dev/null; done
    return 0
  fi
  _lab_sw nft "$op" element bridge tandemlab "$set" "{ ${elems[*]} }"
}
# lab_partitions: the (source MAC . destination MAC) pairs currently dropped
lab_partitions() { _lab_sw nft list set bridge tandemlab cut; }

# ---------------------------------------------------------------------------------------------
# Prometheus (Debian's prometheus package), scraping the lab's directors

# prometheus_start NODE DIRECTOR=ADDR:PORT...: Prometheus in NODE's namespace, listening on
# 127.0.0.1:9090 there, scraping each target every second with the label director=DIRECTOR.
prometheus_start() {
  local node=$1 t targets=
  shift
  for t in "$@"; do
    targets+="      - targets: [\"${t#*=}\"]
        labels: {director: ${t%%=*}}
"
  done
  mkdir -p "$LAB_DIR/prometheus" || return 1
  cat >"$LAB_DIR/prometheus/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: tandem
    static_configs:
$targets
YML
  node_spawn "$node" prometheus prometheus --config.file="$LAB_DIR/prometheus/prometheus.yml" \
    --storage.tsdb.path="$LAB_DIR/prometheus/data" --web.listen-address=127.0.0.1:9090 \
    --log.level=warn >/dev/null
}
# prometheus_query NODE EXPR: the instant query's answer through Prometheus's HTTP API in NODE,
# as "director=value" per series, sorted, on one line; 1 when the API fails.
prometheus_query() {
  node_exec "$1" curl -sf --get --data-urlencode "query=$2" http://127.0.0.1:9090/api/v1/query |
    python3 -c '
import json, sys
r = json.load(sys.stdin)
if r.get("status") != "success":
    sys.exit(1)
print(" ".join(sorted(s["metric"].get("director", "?") + "=" + s["value"][1] for s in r["data"]["result"])))'
}
# prometheus_is NODE EXPR WANT: the query's answer is WANT
prometheus_is() { [[ $(prometheus_query "$1" "$2") == "$3" ]]; }

# ---------------------------------------------------------------------------------------------
# Teardown

# lab_down [DIR]: stop every process this lab started (SIGTERM, then SIGKILL after
# $LAB_STOP_TIMEOUT s, by recorded PID), kill the holders, kill whatever else still runs inside
# the lab's network namespaces (a test's own background node_exec), delete the namespaces and
# remove the state directory. Idempotent.
lab_down() {
  local dir=${1:-$LAB_DIR} rc=0
  [[ -n $dir && -d $dir && -f $dir/lab.env ]] || return 0
  if [[ $dir == "$LAB_DIR" ]]; then
    _lab_down "$dir" || rc=1
    LAB_DIR=
  else
    (LAB_DIR=$dir && _lab_down "$dir") || rc=1
  fi
  return $rc
}
_lab_down() {
  local dir=$1 pid st file rc=0 live=() holders=() ns p
  # 1. processes started with node_spawn: SIGTERM all (SIGKILL those named in
  #    $LAB_DOWN_KILL: corosync needs 1-3 s for a clean exit that nobody here needs), wait,
  #    SIGKILL the rest
  while read -r pid st file; do
    [[ $file == */holder.pid ]] && { holders+=("$pid $st"); continue; }
    _lab_alive "$pid" "$st" || continue
    p=${file##*/}
    if [[ " $LAB_DOWN_KILL " == *" ${p%.pid} "* ]]; then
      kill -KILL "$pid" 2>/dev/null && live+=("$pid $st")
    else
      kill -TERM "$pid" 2>/dev/null && live+=("$pid $st")
    fi
  done <"$dir/pids.all"
  if ((${#live[@]})); then
    if ! wait_until "$LAB_STOP_TIMEOUT" _lab_none_alive "${live[@]}" 2>/dev/null; then
      for p in "${live[@]}"; do
        read -r pid st <<<"$p"
        _lab_alive "$pid" "$st" && { lab_log "lab_down: SIGKILL pid $pid"; kill -KILL "$pid" 2>/dev/null; }
      done
    fi
  fi
  # 2. holders
  for p in "${holders[@]}"; do
    read -r pid st <<<"$p"
    _lab_alive "$pid" "$st" && kill -KILL "$pid" 2>/dev/null
  done
  # 3. anything else still inside the lab's network namespaces
  while read -r ns; do
    [[ -n $ns && -e /run/netns/$ns ]] || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      lab_log "lab_down: pid $pid ($(cat "/proc/$pid/comm" 2>/dev/null)) still in $ns; SIGKILL"
      kill -KILL "$pid" 2>/dev/null
    done
  done <"$dir/netns"
  local all=("${holders[@]}" "${live[@]}")
  if ((${#all[@]})) && ! wait_until 5 _lab_none_alive "${all[@]}"; then
    lab_log "lab_down: processes survived SIGKILL"
    rc=1
  fi
  # 4. namespaces (their veths and bridges go with them)
  while read -r ns; do
    [[ -n $ns && -e /run/netns/$ns ]] || continue
    ip netns del "$ns" || rc=1
  done <"$dir/netns"
  # 5. state
  if [[ $LAB_KEEP == 1 ]]; then
    rm -f "$dir/lab.env.down"
    mv "$dir/lab.env" "$dir/lab.env.down"
    lab_log "lab_down: kept $dir (LAB_KEEP=1)"
  else
    rm -rf "$dir" || rc=1
  fi
  return $rc
}
_lab_none_alive() {
  local p pid st
  for p in "$@"; do
    read -r pid st <<<"$p"
    _lab_alive "$pid" "$st" && return 1
  done
  return 0
}

# lab_trap: tear the lab down when the calling script exits, however it exits.
lab_trap() {
  trap '_lab_on_exit' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
}
_lab_on_exit() {
  local rc=$?
  if [[ -n $LAB_DIR && -f $LAB_DIR/lab.env ]]; then
    lab_down "$LAB_DIR" || lab_log "lab_down reported problems"
  fi
  LAB_DIR=
  exit "$rc"
}

# lab_gc: tear down labs under $LAB_ROOT whose owning script is gone (it was SIGKILLed).
# Labs made by "lab.sh up" have no owner and are left alone.
lab_gc() {
  local d owner pid st
  for d in "$LAB_ROOT"/tandem-lab.*; do
    [[ -f $d/lab.env ]] || continue
    owner=$(sed -n 's/^owner=//p' "$d/lab.env")
    read -r pid st <<<"$owner"
    [[ $pid == 0 ]] && continue
    if ! _lab_alive "$pid" "$st"; then
      lab_log "lab_gc: removing $d (owner $pid is gone)"
      lab_down "$d"
    fi
  done
}

# lab_dump_logs [LINES]: the last lines of every log of the lab (for a failing test)
lab_dump_logs() {
  local f
  [[ -n $LAB_DIR && -d $LAB_DIR ]] || return 0
  for f in "$LAB_DIR"/*/*.log "$LAB_DIR"/*/var/log/corosync/corosync.log; do
    [[ -s $f ]] || continue
    echo "----- ${f#"$LAB_DIR"/}"
    tail -n "${1:-30}" "$f"
  done >&2
}

# lab_status: one line per node
lab_status() {
  local node
  _lab_load || return 1
  echo "lab $_LAB_ID in $LAB_DIR"
  for node in $_LAB_NODES; do
    printf '%-7s netns %-16s' "$node" "$(lab_netns "$node")"
    if [[ $node == d* ]]; then
      if corosync_running "$node"; then
        printf ' corosync pid %s members: %s' "$(node_pid "$node" corosync)" "$(corosync_members "$node")"
      else
        printf ' corosync stopped'
      fi
    fi
    echo
  done
}

# ---------------------------------------------------------------------------------------------
# tandemd logs

# lab_log_ms FILE REGEX SINCE_MS: epoch ms of the first line of FILE (a tandemd log, libqb stamps
# "Mon DD HH:MM:SS.mmm") matching REGEX at or after SINCE_MS; 1 if there is none. Times an event
# from the daemon's own stamp, without polling delay.
lab_log_ms() {
  local line stamp ms
  [[ -f $1 ]] || return 1
  while IFS= read -r line; do
    stamp=${line:0:19}
    ms=$(date -d "${stamp% *} ${stamp##* }" +%s%3N 2>/dev/null) || continue
    if ((ms >= $3)); then echo "$ms"; return 0; fi
  done < <(grep -E "$2" "$1")
  return 1
}

# ---------------------------------------------------------------------------------------------
# Command line: lab.sh up N [options] | down DIR | exec DIR NODE CMD... | status DIR | gc
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  cmd=${1:-}
  shift || true
  case $cmd in
    up)
      reason=$(lab_check_tools) || { echo "cannot run the lab: $reason" >&2; exit 1; }
      lab_up "$@"
      sed -i 's/^owner=.*/owner=0 0/' "$LAB_DIR/lab.env"  # a lab for humans: lab_gc leaves it alone
      # shellcheck disable=SC2086
      corosync_start $_LAB_DIRECTORS
      for d in $_LAB_DIRECTORS; do
        # shellcheck disable=SC2046
        wait_until 30 corosync_sees "$d" $(seq "$_LAB_N") || lab_log "$d does not see all directors yet"
      done
      echo "LAB_DIR=$LAB_DIR"
      ;;
    down) lab_down "$1" ;;
    exec) LAB_DIR=$1; node=$2; shift 2; node_exec "$node" "$@" ;;
    status) LAB_DIR=$1; lab_status ;;
    gc) lab_gc ;;
    *)
      echo "usage: $0 up N [--token MS] [--consensus MS] [--links 1|2] [--link-mode M]" >&2
      echo "       $0 down DIR | exec DIR NODE CMD... | status DIR | gc" >&2
      exit 2
      ;;
  esac
fi

# node_read NODE PATH: REPLY=the first line of PATH as NODE sees it (its private /run, /etc),
# read through the holder's /proc/PID/root: no process is spawned, so a poll can sample every
# few ms. Returns 1 (REPLY empty) when the file is absent or empty.
node_read() {
  local pid
  REPLY=
  _lab_holder "$1" || return 1
  pid=$REPLY
  REPLY=
  IFS= read -r REPLY 2>/dev/null <"/proc/$pid/root$2"
  [[ -n $REPLY ]]
}
