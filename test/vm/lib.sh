# shellcheck shell=bash
# Helpers for the VM lab's tests (test/vm/tests/*), sourced after test/lab/lab.sh.
#
# vm_skip REASON: "SKIPPED: REASON" and exit 0, or "FAIL: ..." and exit 1 when
#   TANDEM_TEST_NO_SKIP=1 (CI runs every test).
# vm_need_ipvs: loads ip_vs (busybox modprobe in the VM) or skips: this kernel has no IPVS.
# vm_need_systemd: skips unless PID 1 is systemd (test/vm/suite --systemd boots the VM so; the
#   tests in test/vm/systemd-tests/ call it first).
# vm_slow_lab_deadlines: inside the VM (TANDEM_VM_GUEST=1, set by test/vm/guest-init), multiplies
#   every deadline of lab.sh's wait_until by TANDEM_VM_DEADLINE_SCALE (default 5). Under TCG
#   each process start costs 5-10 times what it does natively (test/vm/README.md), and lab.sh's
#   own deadlines (20 s for lab_up's holders, 10 s for corosync_start) are set for the host.
#   Use it in tests that check function, not timing; a timing test keeps native deadlines and
#   judges with the VM's numbers.

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
}
