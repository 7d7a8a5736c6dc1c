# shellcheck shell=bash
# exec checks: the command runs in d1 beside `tandem check run` (health_checkers_lab_test's case
# API). The address is only passed to the command in its environment.
health_cases_exec() {
  local rs addr pids=$CASE_DIR/hung.pids took
  rs=$(lab_addr rs1 eth0)
  addr=$rs:80

  check_expect "exec: exit 0 is healthy" healthy "exit 0" -- --type exec --address "$addr" \
    --timeout 2s --command "exit 0"
  check_expect "exec: exit 1 is unhealthy" unhealthy "exit 1" -- --type exec --address "$addr" \
    --timeout 2s --command "exit 1"
  check_expect "exec: the first line it prints is the reason" unhealthy "exit 2: backend says no" \
    -- --type exec --address "$addr" --timeout 2s --command "echo backend says no; echo more; exit 2"
  check_expect "exec: TANDEM_RS_ADDRESS/PORT in its environment" healthy "exit 0" -- --type exec \
    --address "$addr" --timeout 2s --command "test \"\$TANDEM_RS_ADDRESS:\$TANDEM_RS_PORT\" = $addr"
  # A hung command with a child of its own: both are killed at the timeout (the process group).
  : >"$pids"
  if check_expect "exec: hung command killed at the timeout" unhealthy "timed out" -- --type exec \
    --address "$addr" --timeout 500ms --command "echo \$\$ >>$pids; sleep 60 & echo \$! >>$pids; wait"; then
    took=
    [[ $CHECK_OUTPUT =~ \ in\ ([0-9]+)\ ms ]] && took=${BASH_REMATCH[1]}
    # Not before its timeout; after it, by no more than the load margin (lab.sh).
    if lab_at_least "exec: the hung check ended after" "$took" timeout=500 &&
      lab_bound "exec: the hung check ended after" "$took" timeout=500; then
      case_result PASS "exec: the hung check ended after" "${LAB_BOUND#*after }"
    else
      case_result FAIL "exec: the hung check ended after" "${LAB_BOUND#*after }"
    fi
    gone_all() {  # every PID in the file has exited (a zombie counts as gone)
      local p
      while read -r p; do
        [[ -n $p ]] || continue
        _lab_proc "$p" && [[ $_LAB_STATE != Z ]] && return 1
      done <"$pids"
      return 0
    }
    if [[ $(wc -l <"$pids") == 2 ]] && wait_until 2 gone_all; then
      case_result PASS "exec: its shell and its child are gone" "pids $(paste -sd' ' "$pids")"
    else
      case_result FAIL "exec: its shell and its child are gone" "still running: $(paste -sd' ' "$pids")"
    fi
  fi
}
