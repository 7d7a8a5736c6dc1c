# shellcheck shell=bash
# Helpers for the VM lab's tests (test/vm/tests/*), sourced after test/lab/lab.sh.
#
# vm_skip REASON: "SKIPPED: REASON" and exit 0, or "FAIL: ..." and exit 1 when
#   TANDEM_TEST_NO_SKIP=1 (CI runs every test).
# vm_need_ipvs: loads ip_vs (busybox modprobe in the VM) or skips: this kernel has no IPVS.
# vm_need_systemd: skips unless PID 1 is systemd (test/vm/suite --systemd boots the VM so; the
#   tests in test/vm/systemd-tests/ call it first).
# vm_relocate_keepalived SAMPLE [FROM=TO...]: a keepalived sample with the lab's addresses
#   (at the end of this file); vm_first_node_as NAME: an import with NAME as its first node;
#   vm_keepalived_silent_checks: its checks unable to conclude for 10 minutes.
# vm_slow_lab_deadlines: inside the VM (TANDEM_VM_GUEST=1, set by test/vm/guest-init), multiplies
#   every deadline of lab.sh's wait_until by TANDEM_VM_DEADLINE_SCALE (default 5). Under TCG
#   each process start costs 5-10 times what it does natively (test/vm/README.md), and lab.sh's
#   own deadlines (20 s for lab_up's holders, 10 s for corosync_start) are set for the host.
#   Use it in tests that check function, not timing; a timing test keeps native deadlines and
#   judges with the VM's numbers.
#   lab.sh's lab_within (a wait whose deadline is the timers that bound the event plus
#   LAB_SETTLE_MARGIN_MS, for the settle polls' process starts) keeps its timers as they are
#   there: only its margin is scaled (8 s x 5 = 40 s under TCG), and LAB_WITHIN says so. (lab.sh's
#   LAB_LOAD_MARGIN_MS, for durations the daemons stamp, is scaled by lab.sh itself.)

vm_skip() {
  if [[ ${TANDEM_TEST_NO_SKIP:-0} == 1 ]]; then
    echo "FAIL: cannot run, and TANDEM_TEST_NO_SKIP=1 (CI runs every test): $1"
    exit 1
  fi
  echo "SKIPPED: $1"
  exit 0
}

vm_need_ipvs() {
  [[ -e /proc/net/ip_vs ]] && return 0
  modprobe ip_vs >/dev/null 2>&1
  [[ -e /proc/net/ip_vs ]] ||
    vm_skip "this kernel ($(uname -r)) has no IPVS; run it with test/vm/suite (a VM when the host lacks IPVS)"
}

vm_need_systemd() {
  local comm=
  { read -r comm </proc/1/comm; } 2>/dev/null
  if [[ $comm != systemd ]] || ! command -v systemctl >/dev/null 2>&1; then
    vm_skip "PID 1 is ${comm:-unknown}, not systemd; run it with test/vm/suite --systemd"
  fi
}

vm_slow_lab_deadlines() {
  [[ ${TANDEM_VM_GUEST:-0} == 1 ]] || return 0
  declare -F _vm_native_wait_until >/dev/null && return 0
  eval "$(declare -f wait_until | sed '1s/^wait_until /_vm_native_wait_until /')"
  # shellcheck disable=SC2317  # called by lab.sh and the tests
  wait_until() {  # the same deadline in ms times the scale (an integer); no process spawned
    local t=$1 sec frac ms
    shift
    sec=${t%%.*} frac=000
    [[ $t == *.* ]] && frac=${t#*.}000
    ms=$(((10#${sec:-0} * 1000 + 10#${frac:0:3}) * ${TANDEM_VM_DEADLINE_SCALE:-5}))
    printf -v t '%d.%03d' $((ms / 1000)) $((ms % 1000))
    _vm_native_wait_until "$t" "$@"
  }
  # shellcheck disable=SC2317  # called by the tests
  lab_within() {  # lab.sh's, with the margin scaled and the timers not: see above
    local terms=() ms margin=$((LAB_SETTLE_MARGIN_MS * ${TANDEM_VM_DEADLINE_SCALE:-5}))
    while (($#)) && [[ $1 != -- ]]; do terms+=("$1"); shift; done
    shift
    _lab_terms "${terms[@]}"
    ms=$((REPLY_MS + margin))
    lab_ms_text "$margin"
    printf -v LAB_WITHIN 'within %d.%d s (%s%s settle margin: %d ms x %d under TCG)' $((ms / 1000)) \
      $((ms % 1000 / 100)) "${REPLY_TEXT:+$REPLY_TEXT + }" "$REPLY" "$LAB_SETTLE_MARGIN_MS" \
      "${TANDEM_VM_DEADLINE_SCALE:-5}"
    _vm_native_wait_until "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))" "$@"
  }
}

# vm_relocate_keepalived SAMPLE [FROM=TO...]: a keepalived config on stdout with its addresses
# moved into the lab's ranges: each FROM address to its TO; every other IPv4 address, in order
# of first appearance, to 198.51.100.130 and on, then 203.0.113.130 and on (a range "A-B" keeps
# its length); every IPv6 address to 2001:db8:ff::1 and on (likewise). 127.0.0.1, 0.0.0.0 and
# masks (255.x) stay. MISC_CHECK's misc_path becomes "/bin/sleep 3600": the samples' scripts do
# not exist here, and a check that hangs concludes no sooner than its timeout.
vm_relocate_keepalived() {
  local sample=$1
  shift
  perl -e '
    my ($n4, $n6, %m4, %m6) = (0, 0);
    for (@ARGV) { my ($f, $t) = split /=/; $m4{$f} = $t; $m6{lc $f} = $t; }
    sub v4 { my $i = shift; return $i < 120 ? "198.51.100." . (130 + $i) : "203.0.113." . (130 + $i - 120); }
    my $t = do { local $/; <STDIN> };
    $t =~ s{\b(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:-(\d{1,3}))?\b}{
      my ($a, $first, $last, $end) = ("$1.$2.$3.$4", $1, $4, $5);
      if ($a eq "127.0.0.1" || $a eq "0.0.0.0" || $first == 255) { $& }
      else {
        my $to = $m4{$a} //= do { my $i = $n4; $n4 += 1 + (defined $end ? $end - $last : 0); v4($i) };
        defined $end ? $to . "-" . (($to =~ /(\d+)$/)[0] + $end - $last) : $to;
      }
    }ge;
    $t =~ s{(?<![\w:.])([0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7})(?:-([0-9a-fA-F]{1,4}))?(?![\w:])}{
      my ($a, $end) = (lc $1, $2);
      my ($last) = $a =~ /([0-9a-f]*)$/;
      my $to = $m6{$a} //= do {
        my $i = ++$n6; $n6 += defined $end ? hex($end) - hex($last || 0) : 0; sprintf("2001:db8:ff::%x", $i) };
      defined $end ? $to . "-" . sprintf("%x", hex(($to =~ /([0-9a-f]+)$/)[0]) + hex($end) - hex($last || 0)) : $to;
    }ge;
    $t =~ s{^(\s*misc_path)\s.*$}{$1 "/bin/sleep 3600"}mg;
    print $t;
  ' "$@" <"$sample"
}

# vm_first_node_as NAME < CONF > CONF: an imported tandem.conf whose first [[node]] is NAME (the
# lab director that runs it); the rest as it was.
vm_first_node_as() {
  awk -v name="$1" '/^\[\[node\]\]/ { n++ }
    n == 1 && !done && /^name = / { print "name = \"" name "\""; done = 1; next } { print }'
}

# vm_keepalived_silent_checks < CONF > CONF: the same keepalived config with every check unable to
# conclude within 10 minutes: delay_loop 600 in every virtual_server (and where it was set),
# connect_timeout 600 at the top of every checker but MISC_CHECK (whose timeout is delay_loop's
# then; every connect_timeout, misc_timeout and delay_loop of the sample removed), so a
# silent real server is seen down no sooner than that, under keepalived and under tandem's import
# of it (check.interval and check.timeout 10 min). For a
# test that compares the tables the daemons build at start: then no check's clock, which a slow
# VM can outrun, races the reading of the tables.
vm_keepalived_silent_checks() {
  perl -pe '
    if (/^\s*(delay_loop|connect_timeout|misc_timeout)\s/) { $_ = ""; next }
    s/^(\s*virtual_server\s.*\{\s*)$/$1    delay_loop 600\n/;
    s/^(\s*(?:(?!MISC_)[A-Z]+_CHECK|HTTP_GET|SSL_GET)\s*\{\s*)$/$1    connect_timeout 600\n/;
  '
}
